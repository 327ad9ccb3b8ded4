package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rcrowley/go-metrics"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/config"
)

// Server is the GitHub App: webhook endpoint, GitHub clients, probes, metrics and the resync loop.
type Server struct {
	cfg        *config.Config
	opts       options
	logger     zerolog.Logger
	registry   metrics.Registry
	transport  http.RoundTripper // the base of every GitHub API client, observed for readiness
	appCheck   http.RoundTripper // signs GET /app with the App's JWT
	clients    githubapp.ClientCreator
	tokens     *tokenSource
	events     map[string]bool
	webhook    *webhook
	handler    http.Handler
	management http.Handler
	inflight   *tracker
	readiness  *readiness
	queue      *Queue
	bot        atomic.Value // string: the App's bot login, once known

	workCtx  context.Context
	stopWork context.CancelFunc
	started  atomic.Bool
	ready    chan struct{}
	addrMu   sync.Mutex
	addr     string
	mgmtAddr string
}

// New validates cfg and wires the GitHub clients, the webhook dispatcher and the HTTP routes.
func New(cfg *config.Config, opts ...Option) (*Server, error) {
	if cfg == nil {
		return nil, errors.New("app: no configuration")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	o := collectOptions(opts)
	logger, err := loggerFor(cfg, o)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, opts: o, logger: logger, registry: o.registry, inflight: &tracker{}, readiness: &readiness{}, ready: make(chan struct{})}
	s.transport = s.observeGitHub(o.transport)
	s.workCtx, s.stopWork = context.WithCancel(context.Background())
	if err := s.wireGitHub(); err != nil {
		return nil, err
	}
	s.events = handledEvents(o.router)
	s.queue = s.newQueue()
	s.registerBuildInfo()
	s.logStart()
	s.handler, s.management = s.routes()
	return s, nil
}

// loggerFor returns the WithLogger logger or one built from the config.
func loggerFor(cfg *config.Config, o options) (zerolog.Logger, error) {
	if o.logger != nil {
		return *o.logger, nil
	}
	return NewLogger(cfg.Log, os.Stderr)
}

// wireGitHub checks the private key and builds the client creator and the token source.
func (s *Server) wireGitHub() error {
	gh, err := s.cfg.GitHubAppConfig()
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if s.appCheck, err = s.newAppCheckTransport([]byte(gh.App.PrivateKey)); err != nil {
		return fmt.Errorf("app: %w", s.cfg.PrivateKeyError([]byte(gh.App.PrivateKey), err))
	}
	if s.clients, err = s.newClientCreator(gh); err != nil {
		return fmt.Errorf("app: GitHub client creator: %w", err)
	}
	s.tokens = newTokenSource(s.cfg, []byte(gh.App.PrivateKey), s.retrying(s.transport))
	return nil
}

// routes builds the routes of the public listener (webhook and probes) and of
// the management listener (probes and metrics).
func (s *Server) routes() (public, management http.Handler) {
	s.webhook = s.newWebhookHandler()
	pub := http.NewServeMux()
	pub.Handle("POST "+githubapp.DefaultWebhookRoute, s.webhook)
	pub.HandleFunc("GET /healthz", s.serveHealthz)
	pub.HandleFunc("GET /readyz", s.serveReadyz)
	for _, register := range s.opts.public {
		register(pub)
	}
	mgmt := http.NewServeMux()
	mgmt.HandleFunc("GET /healthz", s.serveHealthz)
	mgmt.HandleFunc("GET /readyz", s.serveReadyz)
	mgmt.HandleFunc("GET /metrics", s.serveMetrics)
	return pub, mgmt
}

// Handler returns the public HTTP handler (webhook and probes), for tests and embedding.
func (s *Server) Handler() http.Handler { return s.handler }

// ManagementHandler returns the management HTTP handler (probes and /metrics), for tests and embedding.
func (s *Server) ManagementHandler() http.Handler { return s.management }

// ClientCreator returns the go-githubapp client creator handlers use for installation clients.
func (s *Server) ClientCreator() githubapp.ClientCreator { return s.clients }

// Registry returns the metrics registry exported on /metrics.
func (s *Server) Registry() metrics.Registry { return s.registry }

// Logger returns the base logger.
func (s *Server) Logger() zerolog.Logger { return s.logger }

// Addr returns the public listener's address once Run listens, and "" before.
func (s *Server) Addr() string {
	s.addrMu.Lock()
	defer s.addrMu.Unlock()
	return s.addr
}

// ManagementAddr returns the management listener's address once Run listens, and "" before.
func (s *Server) ManagementAddr() string {
	s.addrMu.Lock()
	defer s.addrMu.Unlock()
	return s.mgmtAddr
}

// Ready is closed once Run listens on both addresses; Addr and ManagementAddr are then set.
// It says nothing about readiness to process webhooks: that is /readyz.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// setAddrs records the listening addresses and closes Ready.
func (s *Server) setAddrs(public, management net.Addr) {
	s.addrMu.Lock()
	s.addr, s.mgmtAddr = public.String(), management.String()
	s.addrMu.Unlock()
	close(s.ready)
}
