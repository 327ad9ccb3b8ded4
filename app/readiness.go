package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
)

// The readiness rule. The app is ready when all of these hold:
//
//   - it has authenticated as the GitHub App: a request signed with the App's
//     JWT (GET /app at start, listing installations, minting an installation
//     token) was answered 2xx;
//   - its first resync has finished (with or without errors: those are logged,
//     and GitHub failures are caught by the next rule);
//   - GitHub answers: fewer than githubFailureThreshold GitHub API requests in
//     a row failed. A request fails when it gets a transport error (connection
//     refused or reset, timeout, …), a 5xx or a 401. Any other answer,
//     including 403, 404 and 429, shows GitHub is reachable and resets the count;
//   - it is not shutting down.
//
// Every attempt counts, retries included, so one call that exhausts its
// retries on 502s makes the app unready, and a single retried blip does not.
// While unready because of GitHub, each /readyz request starts a GET /app
// check in the background, at most once per appCheckInterval, so the app
// becomes ready again without waiting for other traffic.
const (
	githubFailureThreshold = 3
	appCheckInterval       = time.Second
	appCheckTimeout        = 10 * time.Second
)

// readiness tracks the state /readyz reports.
type readiness struct {
	mu            sync.Mutex
	authenticated bool
	authProblem   string // why the latest App check failed
	resynced      bool
	stopping      bool
	failures      int    // GitHub requests failed in a row
	lastFailure   string // the latest of them
	checking      bool
	lastCheck     time.Time
}

// reasons lists why the app is not ready; none when it is.
func (r *readiness) reasons() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	if r.stopping {
		out = append(out, "shutting down")
	}
	if !r.authenticated {
		msg := "not yet authenticated as the GitHub App (no request signed with the App's JWT has succeeded)"
		if r.authProblem != "" {
			msg += ": " + r.authProblem
		}
		out = append(out, msg)
	}
	if !r.resynced {
		out = append(out, "first resync not completed")
	}
	if r.failures >= githubFailureThreshold {
		out = append(out, fmt.Sprintf("GitHub unreachable: the last %d GitHub API requests failed, the latest: %s", r.failures, r.lastFailure))
	}
	return out
}

// needsAppCheck reports whether a GET /app check could make the app ready, and
// if so claims it: at most one at a time, at most once per appCheckInterval.
func (r *readiness) needsAppCheck(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping || r.checking || (r.authenticated && r.failures < githubFailureThreshold) || now.Sub(r.lastCheck) < appCheckInterval {
		return false
	}
	r.checking, r.lastCheck = true, now
	return true
}

// checkDone releases the claim of needsAppCheck and records the check's problem, if any.
func (r *readiness) checkDone(problem string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checking = false
	if !r.authenticated {
		r.authProblem = problem
	}
}

// record notes the outcome of one GitHub request.
func (r *readiness) record(req *http.Request, resp *http.Response, err error) {
	failure := ""
	switch {
	case err != nil:
		if errors.Is(err, context.Canceled) {
			return // the caller gave up (shutdown): says nothing about GitHub
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		failure = fmt.Sprintf("%s %s: %v", req.Method, req.URL.Path, err)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusUnauthorized:
		failure = fmt.Sprintf("%s %s answered %s", req.Method, req.URL.Path, resp.Status)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if failure != "" {
		r.failures++
		r.lastFailure = failure
		return
	}
	r.failures, r.lastFailure = 0, ""
	if resp.StatusCode/100 == 2 && strings.HasPrefix(req.Header.Get("Authorization"), "Bearer ") {
		r.authenticated, r.authProblem = true, ""
	}
}

// setResynced records the end of the first resync.
func (r *readiness) setResynced() {
	r.mu.Lock()
	r.resynced = true
	r.mu.Unlock()
}

// setStopping records the start of the shutdown.
func (r *readiness) setStopping() {
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
}

// observeGitHub records every GitHub API request (each retry included) for readiness.
func (s *Server) observeGitHub(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		s.readiness.record(req, resp, err)
		return resp, err
	})
}

// serveHealthz is the liveness probe: 200 while the process serves HTTP.
func (s *Server) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok"))
}

// serveReadyz is the readiness probe: 200 "ready", or 503 with the reasons.
func (s *Server) serveReadyz(w http.ResponseWriter, _ *http.Request) {
	reasons := s.readiness.reasons()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if len(reasons) == 0 {
		_, _ = w.Write([]byte("ready"))
		return
	}
	s.startAppCheck()
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte("not ready: " + strings.Join(reasons, "; ")))
}

// startAppCheck runs checkApp in the background when readiness needs it.
func (s *Server) startAppCheck() {
	if s.readiness.needsAppCheck(time.Now()) {
		go s.checkApp()
	}
}

// checkApp authenticates as the App with one GET /app, without retries; its
// outcome is recorded by observeGitHub like every GitHub request.
func (s *Server) checkApp() {
	problem := ""
	defer func() { s.readiness.checkDone(problem) }()
	ctx, cancel := context.WithTimeout(s.workCtx, min(appCheckTimeout, s.cfg.GitHub.Timeout.Std()))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.GitHub.V3APIURL+"app", nil)
	if err != nil {
		problem = err.Error()
		return
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("User-Agent", "kalypso/"+s.opts.version)
	resp, err := s.appCheck.RoundTrip(req)
	if err != nil {
		problem = "GET /app: " + err.Error()
		return
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		problem = "GET /app answered " + resp.Status
		return
	}
	s.learnIdentity(body)
}

// learnIdentity keeps the App's bot login ("<slug>[bot]") from GET /app's answer: the sender
// of the events the app's own writes cause.
func (s *Server) learnIdentity(body []byte) {
	var app struct {
		Slug string `json:"slug"`
	}
	if json.Unmarshal(body, &app) == nil && validSlug.MatchString(app.Slug) {
		s.bot.Store(app.Slug + "[bot]")
	}
}

// validSlug is what GitHub allows in an App's slug.
var validSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,99}$`)

// BotLogin returns the App's bot login ("<slug>[bot]") once GET /app answered, "" before.
func (s *Server) BotLogin() string {
	if v, ok := s.bot.Load().(string); ok {
		return v
	}
	return ""
}

// newAppCheckTransport signs requests with the App's JWT, over the observed transport.
func (s *Server) newAppCheckTransport(key []byte) (http.RoundTripper, error) {
	tr, err := ghinstallation.NewAppsTransport(s.transport, s.cfg.GitHub.App.IntegrationID, key)
	if err != nil {
		return nil, err
	}
	tr.BaseURL = s.cfg.APIBaseURL()
	return tr, nil
}
