package githubsim

import (
	"fmt"
	"net/http"
	"strings"
)

// isPermissionLevel reports a role the collaborator permission endpoint knows.
func isPermissionLevel(p string) bool {
	switch p {
	case "admin", "maintain", "write", "triage", "read", "none":
		return true
	}
	return false
}

// SetPermission sets a user's permission on a repository: admin, maintain, write, triage, read or none.
func (s *Server) SetPermission(owner, repo, user, perm string) error {
	if !isPermissionLevel(perm) {
		return fmt.Errorf("githubsim: unknown permission %q", perm)
	}
	rp, err := s.mustRepo(owner, repo)
	if err != nil {
		return err
	}
	rp.mu.Lock()
	defer rp.mu.Unlock()
	rp.perms[strings.ToLower(user)] = perm
	return nil
}

// legacyPermission maps a role to the permission field (maintain → write, triage → read).
func legacyPermission(role string) string {
	switch role {
	case "maintain":
		return "write"
	case "triage":
		return "read"
	}
	return role
}

func (s *Server) getPermission(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	role, ok := rp.perms[strings.ToLower(c.params["username"])]
	rp.mu.Unlock()
	if !ok {
		role = "none"
	}
	return http.StatusOK, map[string]any{
		"permission": legacyPermission(role), "role_name": role, "user": s.userMap(c.params["username"]),
	}, nil
}

func (s *Server) dispatch(c *call) (int, any, error) {
	var in struct {
		EventType     string         `json:"event_type"`
		ClientPayload map[string]any `json:"client_payload"`
	}
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	if in.EventType == "" {
		return 0, nil, validation("Repository", "event_type", "event_type is missing")
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	c.emit(s.dispatchEvent(rp, in.EventType, in.ClientPayload, c.actor))
	return http.StatusNoContent, nil, nil
}
