package githubsim

import (
	"net/http"
)

func (s *Server) getBranch(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	name := c.params["branch"]
	h, ok := rp.branchHash(name)
	if !ok {
		return 0, nil, notFoundMsg("Branch not found")
	}
	cm, err := rp.commitObj(h)
	if err != nil {
		return 0, nil, err
	}
	api := s.base() + "/api/v3/repos/" + rp.fullName() + "/branches/" + pathEscape(name)
	return http.StatusOK, map[string]any{
		"name":   name,
		"commit": s.commitMap(rp, cm),
		"_links": map[string]any{
			"html": s.base() + "/" + rp.fullName() + "/tree/" + pathEscape(name),
			"self": api,
		},
		"protected": false,
		"protection": map[string]any{
			"enabled": false,
			"required_status_checks": map[string]any{
				"enforcement_level": "off", "contexts": []string{}, "checks": []any{},
			},
		},
		"protection_url": api + "/protection",
	}, nil
}
