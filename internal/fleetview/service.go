package fleetview

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Options configures the fleet view.
type Options struct {
	Sources Sources
	// Refresh is how long a snapshot is served before GitHub is read again; 0 reads every time.
	Refresh time.Duration
	// OAuth, with SessionKey, enables /fleet and /api/v1/fleet; nil leaves them off (404).
	OAuth      *OAuth
	SessionKey string
	SessionTTL time.Duration
	// SessionRefresh is how long a session is trusted before its token is checked with
	// GitHub again (DefaultSessionRefresh when 0).
	SessionRefresh time.Duration
	// Badges serves /badges/OWNER/REPO/ENV.svg without sign-in.
	Badges  bool
	Metrics *Metrics // nil: no metrics
	Logger  zerolog.Logger
}

// Service serves the fleet view, its JSON, the badges and keeps the metrics up to date.
type Service struct {
	opts    Options
	seal    *sealer
	access  *accessCache
	revoked *revocations

	mu    sync.Mutex // one build at a time; later callers take its result
	last  *Fleet
	built time.Time
}

// New returns the fleet view service.
func New(opts Options) (*Service, error) {
	if opts.SessionRefresh <= 0 {
		opts.SessionRefresh = DefaultSessionRefresh
	}
	s := &Service{opts: opts, access: newAccessCache(time.Minute, opts.Sources.now), revoked: newRevocations(opts.Sources.now)}
	if opts.OAuth != nil {
		seal, err := newSealer(opts.SessionKey, opts.SessionTTL, opts.Sources.now)
		if err != nil {
			return nil, err
		}
		s.seal = seal
	}
	return s, nil
}

// UseMetrics makes every new snapshot update m. Call it before the service serves requests.
func (s *Service) UseMetrics(m *Metrics) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.Metrics = m
}

// Snapshot returns the fleet, read again when the last snapshot is older than Refresh.
func (s *Service) Snapshot(ctx context.Context) (*Fleet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last != nil && s.opts.Sources.now().Sub(s.built) < s.opts.Refresh {
		return s.last, nil
	}
	f, err := s.opts.Sources.Build(s.opts.Logger.With().Str("component", "fleet").Logger().WithContext(ctx))
	if err != nil {
		return nil, err
	}
	s.last, s.built = f, s.opts.Sources.now()
	if s.opts.Metrics != nil {
		s.opts.Metrics.update(f)
	}
	return f, nil
}

// Run refreshes the snapshot, and so the metrics, every interval until ctx ends.
func (s *Service) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.Snapshot(ctx); err != nil && ctx.Err() == nil {
			s.opts.Logger.Warn().Err(err).Msg("fleet view refresh failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Register adds the routes to mux: the fleet view and its sign-in when OAuth is set, the
// badges when enabled.
func (s *Service) Register(mux *http.ServeMux) {
	if s.opts.OAuth != nil {
		mux.HandleFunc("GET /fleet", s.servePage)
		mux.HandleFunc("GET /fleet/login", s.serveLogin)
		mux.HandleFunc("GET /fleet/callback", s.serveCallback)
		mux.HandleFunc("POST /fleet/logout", s.serveLogout)
		mux.HandleFunc("GET /fleet/signed-out", s.serveSignedOut)
		mux.HandleFunc("GET /api/v1/fleet", s.serveJSON)
	}
	if s.opts.Badges {
		mux.HandleFunc("GET /badges/{owner}/{repo}/{file}", s.serveBadge)
	}
}

// visible returns the part of the fleet the request's user may see, or ErrNoSession.
func (s *Service) visible(w http.ResponseWriter, r *http.Request) (*Fleet, Session, error) {
	sess, err := s.session(w, r)
	if err != nil {
		return nil, sess, err
	}
	f, err := s.Snapshot(r.Context())
	if err != nil {
		return nil, sess, err
	}
	out := &Fleet{GeneratedAt: f.GeneratedAt, ControlPlanes: []ControlPlane{}}
	for _, cp := range f.ControlPlanes {
		ok, err := s.access.canRead(r.Context(), sess.Token, cp.Repo, s.opts.OAuth.canRead)
		if err != nil {
			return nil, sess, err
		}
		if ok {
			out.ControlPlanes = append(out.ControlPlanes, cp)
		}
	}
	return out, sess, nil
}

// serveJSON answers /api/v1/fleet: 401 without a session.
func (s *Service) serveJSON(w http.ResponseWriter, r *http.Request) {
	f, _, err := s.visible(w, r)
	if err != nil {
		s.fail(w, err, true)
		return
	}
	noStore(w)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(f)
}

// fail answers an error: 401 (JSON) or a redirect to sign-in without a session (whose cookie
// is cleared), else 502.
func (s *Service) fail(w http.ResponseWriter, err error, api bool) {
	noStore(w)
	if errors.Is(err, ErrNoSession) {
		http.SetCookie(w, s.clearedSession())
		if api {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"message":"sign in at /fleet/login"}` + "\n"))
			return
		}
		w.Header().Set("Location", "/fleet/login")
		w.WriteHeader(http.StatusSeeOther)
		return
	}
	s.opts.Logger.Warn().Err(err).Msg("fleet view failed")
	http.Error(w, "the fleet cannot be read from GitHub right now", http.StatusBadGateway)
}

// noStore keeps private pages out of shared caches.
func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
}

// serveLogin starts the OAuth web flow.
func (s *Service) serveLogin(w http.ResponseWriter, r *http.Request) {
	state := newState()
	http.SetCookie(w, s.opts.OAuth.stateCookieFor(state))
	noStore(w)
	http.Redirect(w, r, s.opts.OAuth.authorizeURL(state), http.StatusFound)
}

// serveCallback ends the OAuth web flow: checks the state, trades the code for the user's
// token and sets the session cookie.
func (s *Service) serveCallback(w http.ResponseWriter, r *http.Request) {
	noStore(w)
	http.SetCookie(w, s.opts.OAuth.stateCookieFor(""))
	code := r.URL.Query().Get("code")
	if !sameState(r) || code == "" || len(code) > 256 {
		http.Error(w, "sign-in failed: start again at /fleet/login", http.StatusBadRequest)
		return
	}
	token, err := s.opts.OAuth.exchange(r.Context(), code)
	if err != nil {
		s.opts.Logger.Warn().Err(err).Msg("fleet sign-in failed")
		http.Error(w, "sign-in failed", http.StatusBadGateway)
		return
	}
	login, err := s.opts.OAuth.login(r.Context(), token)
	if err != nil {
		s.opts.Logger.Warn().Err(err).Msg("fleet sign-in failed")
		http.Error(w, "sign-in failed", http.StatusBadGateway)
		return
	}
	now := s.opts.Sources.now()
	exp := now.Add(s.seal.ttl)
	value, err := s.seal.seal(Session{Login: login, Token: token, Expires: exp, Checked: now})
	if err != nil {
		http.Error(w, "sign-in failed", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, s.seal.cookie(value, exp, s.opts.OAuth.secure()))
	http.Redirect(w, r, "/fleet", http.StatusSeeOther)
}
