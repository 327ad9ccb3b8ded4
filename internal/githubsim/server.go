package githubsim

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a simulated GitHub.
type Options struct {
	// Dir holds the bare repositories, one per owner/name.git. Required.
	Dir string
	// AppID is the GitHub App ID. Default 1.
	AppID int64
	// AppSlug is the App's slug; its bot user is "<slug>[bot]". Default "kalypso".
	AppSlug string
	// AppName is the App's display name. Default "Kalypso".
	AppName string
	// PrivateKey is the App's RSA key; nil generates one (see GenerateKey).
	PrivateKey *rsa.PrivateKey
	// PrivateKeyPEM is used when PrivateKey is nil (PKCS#1 or PKCS#8 PEM).
	PrivateKeyPEM []byte
	// TokenTTL is the lifetime of installation tokens. Default one hour.
	TokenTTL time.Duration
	// RateLimit is the hourly primary rate limit per installation. Default 5000.
	RateLimit int
	// Clock returns the current time. Default time.Now.
	Clock func() time.Time
	// WebhookClient sends webhook deliveries. Default: a client with a 10 s timeout.
	WebhookClient *http.Client
	// GitHTTPBackend is the path of git-http-backend. Default: found through `git --exec-path`.
	GitHTTPBackend string
	// DefaultUser is the human login of CommitFiles and the App owner. Default "octocat".
	DefaultUser string
	// CacheControl, when set, is sent with every 200 GET answer; GitHub
	// sends "private, max-age=60, s-maxage=60". Empty makes HTTP caches
	// revalidate each time (with If-None-Match, answered 304).
	CacheControl string
	// ClientID and ClientSecret are the App's OAuth credentials. Defaults DefaultClientID
	// and DefaultClientSecret.
	ClientID, ClientSecret string
}

// Server is a simulated GitHub. Its zero value is not usable; call New.
type Server struct {
	opts Options
	key  *rsa.PrivateKey

	router *router
	hooks  *hookBus
	faults *faultSet
	calls  *callStats
	limits *rateLimits
	oauth  *oauthState

	ids atomic.Int64

	mu        sync.Mutex
	baseURL   string
	baseFixed bool
	installs  map[int64]*installation
	tokens    map[string]*accessToken
	repos     map[string]*repo
	users     map[string]int64
	orgs      map[string]bool
	teams     map[string][]string // "org/slug" (lower case) → member logins

	gitBackend string
	httpSrv    *http.Server
	listener   net.Listener
	createdAt  time.Time
}

// New creates a simulated GitHub that stores repositories under opts.Dir.
func New(opts Options) (*Server, error) {
	if opts.Dir == "" {
		return nil, errors.New("githubsim: Options.Dir is required")
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("githubsim: create dir: %w", err)
	}
	applyDefaults(&opts)
	key, err := appKey(opts)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:     opts,
		key:      key,
		faults:   &faultSet{},
		calls:    newCallStats(),
		limits:   newRateLimits(opts.RateLimit),
		oauth:    newOAuthState(),
		installs: map[int64]*installation{},
		tokens:   map[string]*accessToken{},
		repos:    map[string]*repo{},
		users:    map[string]int64{},
		orgs:     map[string]bool{},
		teams:    map[string][]string{},
		baseURL:  "http://127.0.0.1",
	}
	s.ids.Store(1000)
	s.createdAt = s.now()
	s.hooks = newHookBus(opts.WebhookClient, s.now, opts.AppID)
	s.router = s.routes()
	return s, nil
}

func applyDefaults(o *Options) {
	if o.AppID == 0 {
		o.AppID = 1
	}
	if o.AppSlug == "" {
		o.AppSlug = "kalypso"
	}
	if o.AppName == "" {
		o.AppName = "Kalypso"
	}
	if o.TokenTTL == 0 {
		o.TokenTTL = time.Hour
	}
	if o.RateLimit == 0 {
		o.RateLimit = 5000
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.WebhookClient == nil {
		o.WebhookClient = &http.Client{Timeout: 10 * time.Second}
	}
	if o.ClientID == "" {
		o.ClientID, o.ClientSecret = DefaultClientID, DefaultClientSecret
	}
	if o.DefaultUser == "" {
		o.DefaultUser = "octocat"
	}
}

// Start serves the simulator on a free port of 127.0.0.1 and sets its base URL.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("githubsim: listen: %w", err)
	}
	return s.Serve(ln)
}

// Serve serves the simulator on ln in the background and sets its base URL.
func (s *Server) Serve(ln net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.httpSrv, s.listener = srv, ln
	s.baseURL, s.baseFixed = "http://"+ln.Addr().String(), true
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// Close stops a server started with Start or Serve and waits for queued webhooks.
func (s *Server) Close() error {
	s.hooks.wait()
	s.mu.Lock()
	srv := s.httpSrv
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	if err := srv.Close(); err != nil {
		return fmt.Errorf("githubsim: close: %w", err)
	}
	return nil
}

// SetBaseURL sets the externally visible URL (scheme://host:port) used in
// response bodies and webhooks. Without it, a Handler served elsewhere
// takes http://<Host> of its first request.
func (s *Server) SetBaseURL(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.baseURL, s.baseFixed = strings.TrimSuffix(u, "/"), true
}

// learnBaseURL takes the base URL from the first request when neither
// Start, Serve nor SetBaseURL set it.
func (s *Server) learnBaseURL(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.baseFixed && r.Host != "" {
		s.baseURL, s.baseFixed = "http://"+r.Host, true
	}
}

// URL returns the base URL, for example http://127.0.0.1:41234.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.baseURL
}

// APIURL returns the REST base URL with a trailing slash (…/api/v3/).
func (s *Server) APIURL() string { return s.URL() + "/api/v3/" }

// UploadURL returns the upload base URL with a trailing slash (…/api/uploads/).
func (s *Server) UploadURL() string { return s.URL() + "/api/uploads/" }

// GitURL returns the smart HTTP clone URL of a repository.
func (s *Server) GitURL(owner, repo string) string {
	return fmt.Sprintf("%s/%s/%s.git", s.URL(), owner, repo)
}

// Handler returns the simulator as an http.Handler.
func (s *Server) Handler() http.Handler { return s }

// ServeHTTP routes REST calls under /api/v3 and git smart HTTP under /{owner}/{repo}.git.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.learnBaseURL(r)
	switch {
	case strings.HasPrefix(r.URL.Path, "/api/v3/"):
		s.serveAPI(w, r)
	case r.URL.Path == "/login":
		s.serveWebLogin(w, r)
	case r.URL.Path == "/login/oauth/authorize":
		s.serveAuthorize(w, r)
	case r.URL.Path == "/login/oauth/access_token":
		s.serveAccessToken(w, r)
	case isGitPath(r.URL.Path):
		s.serveGit(w, r)
	default:
		writeJSON(w, http.StatusNotFound, errorBody("Not Found"))
	}
}

func (s *Server) now() time.Time { return s.opts.Clock().UTC().Truncate(time.Second) }

func (s *Server) nextID() int64 { return s.ids.Add(1) }

func (s *Server) base() string { return s.URL() }

func isGitPath(p string) bool {
	_, _, _, ok := gitPath(p)
	return ok
}
