package githubsim

import (
	"net/http"
	"strings"
)

// SetTeam sets the members of a team of an organisation (GET /orgs/{org}/teams/{team_slug}/members).
func (s *Server) SetTeam(org, slug string, members []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.teams[strings.ToLower(org)+"/"+strings.ToLower(slug)] = append([]string(nil), members...)
}

// listTeamMembers answers GET /orgs/{org}/teams/{team_slug}/members: simple users, paginated;
// 404 for a team that does not exist.
func (s *Server) listTeamMembers(c *call) (int, any, error) {
	s.mu.Lock()
	members, ok := s.teams[strings.ToLower(c.params["org"])+"/"+strings.ToLower(c.params["team_slug"])]
	s.mu.Unlock()
	if !ok {
		return 0, nil, notFound()
	}
	out := make([]map[string]any, 0, len(members))
	for _, login := range members {
		out = append(out, s.userMap(login))
	}
	return http.StatusOK, paginate(c, out), nil
}
