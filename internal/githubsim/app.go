package githubsim

import (
	"net/http"
	"strings"
	"time"
)

// installation is one installation of the App on an account.
type installation struct {
	id        int64
	account   string
	createdAt time.Time
	suspended bool
}

// appPermissions are the permissions every simulated installation grants.
func appPermissions() map[string]string {
	return map[string]string{
		"checks": "write", "contents": "write", "deployments": "write", "issues": "write",
		"metadata": "read", "pull_requests": "write", "statuses": "write",
	}
}

// appEvents are the events the simulated App subscribes to.
func appEvents() []string {
	return []string{"check_run", "check_suite", "pull_request", "push", "status"}
}

// CreateInstallation installs the App on an organization account and returns the installation ID.
func (s *Server) CreateInstallation(account string) int64 {
	id := s.nextID()
	s.mu.Lock()
	s.orgs[strings.ToLower(account)] = true
	s.installs[id] = &installation{id: id, account: account, createdAt: s.now()}
	s.mu.Unlock()
	return id
}

// SuspendInstallation suspends or unsuspends an installation; a suspended
// installation's tokens get 403.
func (s *Server) SuspendInstallation(id int64, suspended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if inst, ok := s.installs[id]; ok {
		inst.suspended = suspended
	}
}

// appMap is the integration object of the App.
func (s *Server) appMap() map[string]any {
	return map[string]any{
		"id": s.opts.AppID, "slug": s.opts.AppSlug, "node_id": nodeID("Integration", s.opts.AppID),
		"client_id": "Iv1.sim" + itoa64(s.opts.AppID), "owner": s.userMap(s.opts.DefaultUser),
		"name": s.opts.AppName, "description": "Simulated GitHub App",
		"external_url": s.base() + "/apps/" + s.opts.AppSlug, "html_url": s.base() + "/apps/" + s.opts.AppSlug,
		"created_at": tsOrNil(s.createdAt), "updated_at": tsOrNil(s.createdAt),
		"permissions": appPermissions(), "events": appEvents(), "installations_count": len(s.installations()),
	}
}

func (s *Server) installations() []*installation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*installation, 0, len(s.installs))
	for _, inst := range s.installs {
		out = append(out, inst)
	}
	sortBy(out, func(i *installation) int64 { return i.id })
	return out
}

func (s *Server) installationByID(id int64) *installation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.installs[id]
}

func (s *Server) installationMap(inst *installation) map[string]any {
	api := s.base() + "/api/v3"
	acct := s.userMap(inst.account)
	// The description's list schema is allOf simple-user and enterprise,
	// so the account also carries the enterprise keys.
	acct["name"], acct["slug"] = inst.account, strings.ToLower(inst.account)
	acct["created_at"], acct["updated_at"] = tsOrNil(inst.createdAt), tsOrNil(inst.createdAt)
	var suspendedAt any
	if inst.suspended {
		suspendedAt = tsOrNil(inst.createdAt)
	}
	return map[string]any{
		"id": inst.id, "account": acct, "repository_selection": "selected",
		"access_tokens_url": api + "/app/installations/" + itoa64(inst.id) + "/access_tokens",
		"repositories_url":  api + "/installation/repositories",
		"html_url":          s.base() + "/organizations/" + inst.account + "/settings/installations/" + itoa64(inst.id),
		"app_id":            s.opts.AppID, "app_slug": s.opts.AppSlug, "target_id": s.userID(inst.account),
		"target_type": "Organization", "permissions": appPermissions(), "events": appEvents(),
		"created_at": tsOrNil(inst.createdAt), "updated_at": tsOrNil(inst.createdAt),
		"single_file_name": nil, "suspended_by": nil, "suspended_at": suspendedAt,
	}
}

func (s *Server) getApp(c *call) (int, any, error) { return http.StatusOK, s.appMap(), nil }

func (s *Server) listInstallations(c *call) (int, any, error) {
	out := []map[string]any{}
	for _, inst := range s.installations() {
		out = append(out, s.installationMap(inst))
	}
	return http.StatusOK, paginate(c, out), nil
}

func (s *Server) getInstallation(c *call) (int, any, error) {
	id, err := c.intParam("installation_id")
	if err != nil {
		return 0, nil, err
	}
	inst := s.installationByID(id)
	if inst == nil {
		return 0, nil, notFound()
	}
	return http.StatusOK, s.installationMap(inst), nil
}

func (s *Server) createAccessToken(c *call) (int, any, error) {
	id, err := c.intParam("installation_id")
	if err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	inst, ok := s.installs[id]
	var tok *accessToken
	if ok && !inst.suspended {
		tok = s.issueTokenLocked(id)
	}
	s.mu.Unlock()
	if !ok {
		return 0, nil, notFound()
	}
	if tok == nil {
		return 0, nil, newError(http.StatusForbidden, "This installation has been suspended")
	}
	return http.StatusCreated, map[string]any{
		"token": tok.token, "expires_at": tok.expires.Format(time.RFC3339),
		"permissions": appPermissions(), "repository_selection": "selected",
	}, nil
}

func (s *Server) getRepoInstallation(c *call) (int, any, error) {
	inst := s.installationByID(c.repo.installID)
	if inst == nil {
		return 0, nil, notFound()
	}
	return http.StatusOK, s.installationMap(inst), nil
}

// getAccountInstallation serves /orgs/{org}/installation and /users/{username}/installation.
func (s *Server) getAccountInstallation(c *call) (int, any, error) {
	login := c.params["org"] + c.params["username"]
	for _, inst := range s.installations() {
		if strings.EqualFold(inst.account, login) {
			return http.StatusOK, s.installationMap(inst), nil
		}
	}
	return 0, nil, notFound()
}

func (s *Server) listInstallationRepos(c *call) (int, any, error) {
	out := []map[string]any{}
	for _, rp := range s.reposOf(c.inst.id) {
		rp.mu.Lock()
		out = append(out, s.repoMap(rp))
		rp.mu.Unlock()
	}
	page := paginate(c, out)
	return http.StatusOK, map[string]any{"total_count": len(out), "repositories": page, "repository_selection": "selected"}, nil
}
