package githubsim

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cgi"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// gitPath splits /{owner}/{repo}[.git]/{service path}.
func gitPath(p string) (owner, name, rest string, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 3)
	if len(parts) < 3 {
		return "", "", "", false
	}
	rest = parts[2]
	switch {
	case rest == "info/refs", rest == "git-upload-pack", rest == "git-receive-pack", rest == "HEAD",
		strings.HasPrefix(rest, "objects/"):
		return parts[0], strings.TrimSuffix(parts[1], ".git"), rest, true
	}
	return "", "", "", false
}

// gitBackendPath finds git-http-backend once.
func (s *Server) gitBackendPath() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gitBackend != "" {
		return s.gitBackend, nil
	}
	if s.opts.GitHTTPBackend != "" {
		s.gitBackend = s.opts.GitHTTPBackend
		return s.gitBackend, nil
	}
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return "", fmt.Errorf("githubsim: git --exec-path: %w", err)
	}
	s.gitBackend = filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	return s.gitBackend, nil
}

// serveGit serves git smart HTTP through git-http-backend behind basic
// auth x-access-token:<installation token>, and turns pushed ref changes
// into webhooks.
func (s *Server) serveGit(w http.ResponseWriter, r *http.Request) {
	owner, name, rest, _ := gitPath(r.URL.Path)
	key := r.Method + " " + rest
	if svc := r.URL.Query().Get("service"); svc != "" {
		key += "?service=" + svc
	}
	s.calls.addGit(key)
	if f, ok := s.faults.take(r, "", r.URL.Path); ok {
		if !s.faults.hold(r, f) {
			return // the client went away
		}
		if f.Status != 0 {
			s.writeFault(w, f)
			return
		}
	}
	rp := s.lookupRepo(owner, name)
	if rp == nil {
		http.Error(w, "Repository not found.", http.StatusNotFound)
		return
	}
	_, password, _ := r.BasicAuth()
	inst, err := s.tokenInstallation(password)
	if err != nil || inst.id != rp.installID {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "Invalid username or token.", http.StatusUnauthorized)
		return
	}
	backend, err := s.gitBackendPath()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	events := s.runBackend(w, r, rp, backend, rest)
	s.hooks.deliver(events)
}

func (s *Server) runBackend(w http.ResponseWriter, r *http.Request, rp *repo, backend, rest string) []*hookEvent {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	before, _ := rp.refs()
	req := r.Clone(r.Context())
	req.Header.Del("Authorization")
	req.URL.Path = "/" + rp.owner + "/" + rp.name + ".git/" + rest
	h := &cgi.Handler{
		Path: backend,
		Root: "/",
		Env: []string{
			"GIT_PROJECT_ROOT=" + s.opts.Dir, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=x-access-token",
			"GIT_CONFIG_NOSYSTEM=1", "HOME=" + s.opts.Dir,
		},
		Stderr: io.Discard,
		Logger: log.New(io.Discard, "", 0),
	}
	h.ServeHTTP(w, req)
	if rest != "git-receive-pack" {
		return nil
	}
	if err := rp.reopen(); err != nil {
		return nil
	}
	after, err := rp.refs()
	if err != nil {
		return nil
	}
	return s.pushedRefs(rp, before, after)
}

// pushedRefs turns the difference between two ref snapshots into webhooks.
func (s *Server) pushedRefs(rp *repo, before, after map[string]plumbing.Hash) []*hookEvent {
	var events []*hookEvent
	names := map[string]bool{}
	for n := range before {
		names[n] = true
	}
	for n := range after {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sortStrings(sorted)
	for _, n := range sorted {
		if before[n] != after[n] {
			events = append(events, s.refChanged(rp, n, before[n], after[n], s.BotLogin())...)
		}
	}
	return events
}
