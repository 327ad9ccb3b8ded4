package githubsim

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	"github.com/google/go-github/v62/github"
)

// userID returns a stable numeric ID for a login.
func (s *Server) userID(login string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(login)
	if id, ok := s.users[key]; ok {
		return id
	}
	id := s.nextID()
	s.users[key] = id
	return id
}

func (s *Server) userType(login string) string {
	if strings.HasSuffix(login, "[bot]") {
		return "Bot"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.orgs[strings.ToLower(login)] {
		return "Organization"
	}
	return "User"
}

// user builds a simple-user for login.
func (s *Server) user(login string) *github.User {
	id := s.userID(login)
	typ := s.userType(login)
	api := s.base() + "/api/v3/users/" + url.PathEscape(login)
	return &github.User{
		Login:             ptr(login),
		ID:                ptr(id),
		NodeID:            ptr(nodeID(typ, id)),
		AvatarURL:         ptr(s.base() + "/avatars/" + url.PathEscape(login)),
		GravatarID:        ptr(""),
		URL:               ptr(api),
		HTMLURL:           ptr(s.base() + "/" + url.PathEscape(login)),
		FollowersURL:      ptr(api + "/followers"),
		FollowingURL:      ptr(api + "/following{/other_user}"),
		GistsURL:          ptr(api + "/gists{/gist_id}"),
		StarredURL:        ptr(api + "/starred{/owner}{/repo}"),
		SubscriptionsURL:  ptr(api + "/subscriptions"),
		OrganizationsURL:  ptr(api + "/orgs"),
		ReposURL:          ptr(api + "/repos"),
		EventsURL:         ptr(api + "/events{/privacy}"),
		ReceivedEventsURL: ptr(api + "/received_events"),
		Type:              ptr(typ),
		SiteAdmin:         ptr(false),
	}
}

// userMap is the JSON object of a simple-user.
func (s *Server) userMap(login string) map[string]any {
	if login == "" {
		return nil
	}
	return toMap(s.user(login))
}

// gitIdentity returns a name and e-mail address for a login.
func (s *Server) gitIdentity(login string) (string, string) {
	id := s.userID(login)
	return login, fmt.Sprintf("%d+%s@users.noreply.github.com", id, login)
}

func nodeID(kind string, id int64) string {
	return base64.RawStdEncoding.EncodeToString([]byte(fmt.Sprintf("%s%d", kind, id)))
}
