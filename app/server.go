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

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rcrowley/go-metrics"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/config"
)

// Server is the GitHub App: webhook endpoint, GitHub clients, metrics and the resync loop.
type Server struct {
	cfg      *config.Config
	opts     options
	logger   zerolog.Logger
	registry metrics.Registry
	clients  githubapp.ClientCreator
	tokens   *tokenSource
	events   map[string]bool
	handler  http.Handler
	inflight *tracker

	workCtx  context.Context
	stopWork context.CancelFunc
	started  atomic.Bool
	ready    chan struct{}
	addrMu   sync.Mutex
	addr     string
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
	s := &Server{cfg: cfg, opts: o, logger: logger, registry: o.registry, inflight: &tracker{}, ready: make(chan struct{})}
	s.workCtx, s.stopWork = context.WithCancel(context.Background())
	if err := s.wireGitHub(); err != nil {
		return nil, err
	}
	s.events = handledEvents(o.handlers)
	s.handler = s.routes()
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
	if _, err := ghinstallation.NewAppsTransport(s.opts.transport, gh.App.IntegrationID, []byte(gh.App.PrivateKey)); err != nil {
		return fmt.Errorf("app: %w", s.cfg.PrivateKeyError([]byte(gh.App.PrivateKey), err))
	}
	if s.clients, err = s.newClientCreator(gh); err != nil {
		return fmt.Errorf("app: GitHub client creator: %w", err)
	}
	s.tokens = newTokenSource(s.cfg, []byte(gh.App.PrivateKey), s.retrying(s.opts.transport))
	return nil
}

// routes builds the HTTP routes.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST "+githubapp.DefaultWebhookRoute, s.newWebhookHandler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("GET /metrics", s.serveMetrics)
	return mux
}

// Handler returns the HTTP handler (webhook, health and metrics routes), for tests and embedding.
func (s *Server) Handler() http.Handler { return s.handler }

// ClientCreator returns the go-githubapp client creator handlers use for installation clients.
func (s *Server) ClientCreator() githubapp.ClientCreator { return s.clients }

// Registry returns the metrics registry exported on /metrics.
func (s *Server) Registry() metrics.Registry { return s.registry }

// Logger returns the base logger.
func (s *Server) Logger() zerolog.Logger { return s.logger }

// Addr returns the listening address once Run listens, and "" before.
func (s *Server) Addr() string {
	s.addrMu.Lock()
	defer s.addrMu.Unlock()
	return s.addr
}

// Ready is closed once Run listens; Addr is then set.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// setAddr records the listening address and signals readiness.
func (s *Server) setAddr(a net.Addr) {
	s.addrMu.Lock()
	s.addr = a.String()
	s.addrMu.Unlock()
	close(s.ready)
}
