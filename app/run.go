package app

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// managementCloseTimeout bounds the wait for scrapes in progress once the work has drained.
const managementCloseTimeout = time.Second

// Run listens on server.address (webhook and probes) and
// server.managementAddress (probes and metrics), authenticates as the App,
// starts the workers, runs the resync at start and every resync.interval, and
// serves until ctx ends. It then shuts down gracefully: /readyz turns 503, the
// public listener stops accepting requests, the work ready in the queue and the
// runs in progress may finish within server.shutdownTimeout (delayed retries
// and polls are dropped: the next start's resync takes them up), and the
// management listener closes last. Work still running after that has its
// context cancelled and is reported in the error. The WithStop functions run
// then, before Run returns.
func (s *Server) Run(ctx context.Context) error {
	if !s.started.CompareAndSwap(false, true) {
		return errors.New("app: Run called twice")
	}
	pubLn, err := s.listenPublic()
	if err != nil {
		return err
	}
	mgmtLn, err := net.Listen("tcp", s.cfg.Server.ManagementAddress)
	if err != nil {
		_ = pubLn.Close()
		return fmt.Errorf("app: listen on %s (server.managementAddress): %w", s.cfg.Server.ManagementAddress, err)
	}
	public, management := s.httpServer(s.handler), s.httpServer(s.management)
	public.ConnState = pubLn.connState
	serveErr := make(chan error, 2)
	go func() { serveErr <- public.Serve(pubLn) }()
	go func() { serveErr <- management.Serve(mgmtLn) }()
	s.setAddrs(pubLn.Addr(), mgmtLn.Addr())
	s.logger.Info().Str("address", s.Addr()).Str("management_address", s.ManagementAddr()).Msg("listening")

	loopCtx, stopLoop := context.WithCancel(ctx)
	defer stopLoop()
	s.queue.start()
	s.startAppCheck()
	resyncDone := s.startResync(loopCtx)

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		runErr = fmt.Errorf("app: serve HTTP: %w", err)
	}
	stopLoop()
	err = errors.Join(runErr, s.shutdown(public, management, resyncDone))
	for _, fn := range s.opts.stop {
		fn()
	}
	return err
}

// listenPublic listens on server.address and serves at most server.maxConnections
// connections at once (see connLimiter): with server.maxHeaderBytes, this bounds the memory
// clients that never finish their headers can take.
func (s *Server) listenPublic() (*connLimiter, error) {
	ln, err := net.Listen("tcp", s.cfg.Server.Address)
	if err != nil {
		return nil, fmt.Errorf("app: listen on %s (server.address): %w", s.cfg.Server.Address, err)
	}
	evicted := s.counter(MetricConnectionsEvicted)
	return limitConnections(ln, s.cfg.Server.MaxConnections, func() { evicted.Inc(1) }), nil
}

// httpServer builds an HTTP server with the server.* timeouts and limits.
func (s *Server) httpServer(h http.Handler) *http.Server {
	c := s.cfg.Server
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.ReadHeaderTimeout.Std(),
		ReadTimeout:       c.ReadTimeout.Std(),
		WriteTimeout:      c.WriteTimeout.Std(),
		IdleTimeout:       c.IdleTimeout.Std(),
		MaxHeaderBytes:    c.MaxHeaderBytes,
		ErrorLog:          log.New(s.logger, "", 0),
	}
}

// shutdown stops the public HTTP server, then waits for webhook work and the
// resync loop within shutdownTimeout, cancels whatever is left, and finally
// closes the management server.
func (s *Server) shutdown(public, management *http.Server, resyncDone <-chan struct{}) error {
	s.logger.Info().Msg("shutting down: refusing new webhooks, waiting for queued and running work")
	s.readiness.setStopping()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Server.ShutdownTimeout.Std())
	defer cancel()
	defer s.closeManagement(management)
	defer s.stopWork()
	var errs []error
	if err := public.Shutdown(ctx); err != nil {
		_ = public.Close()
		errs = append(errs, fmt.Errorf("app: stop HTTP server: %w", err))
	}
	if err := s.queue.stop(ctx); err != nil {
		errs = append(errs, fmt.Errorf("app: graceful shutdown: %w", err))
	}
	if err := s.inflight.drain(ctx); err != nil {
		errs = append(errs, fmt.Errorf("app: graceful shutdown: %w", err))
	}
	select {
	case <-resyncDone:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("app: graceful shutdown: resync still running: %w", ctx.Err()))
	}
	err := errors.Join(errs...)
	if err != nil {
		s.logger.Error().Err(err).Msg("shutdown incomplete; cancelling remaining work")
		return err
	}
	s.logger.Info().Msg("shutdown complete")
	return nil
}

// closeManagement stops the management server, letting scrapes in progress end briefly.
func (s *Server) closeManagement(management *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), managementCloseTimeout)
	defer cancel()
	if err := management.Shutdown(ctx); err != nil {
		_ = management.Close()
	}
}

// startResync runs the resync loop in the background; the returned channel
// closes when the loop has stopped and its last run has returned.
func (s *Server) startResync(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if s.opts.resync == nil {
		s.readiness.setResynced()
		close(done)
		return done
	}
	go func() {
		defer close(done)
		s.resyncLoop(ctx)
	}()
	return done
}

// resyncLoop runs the resync now and then resync.interval after each run ends,
// so two runs never overlap, until ctx ends. The end of the first run, with or
// without errors, counts for readiness.
func (s *Server) resyncLoop(ctx context.Context) {
	interval := s.cfg.Resync.Interval.Std()
	for ctx.Err() == nil {
		s.runResync(ctx)
		s.readiness.setResynced()
		if interval <= 0 {
			return
		}
		timer := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
	}
}

// runResync adds the resync's work to the queue and waits until that work, and the work it
// made due in turn, is done (or ctx ends). Errors and panics are logged, not fatal.
func (s *Server) runResync(ctx context.Context) {
	logger := s.logger.With().Str("trigger", TriggerResync).Logger()
	start := time.Now()
	done := make(chan error, 1)
	round := workq.NewRound(func(err error) { done <- err })
	err := safeCall(func() error {
		return s.opts.resync(workq.WithOrigin(workq.WithRound(logger.WithContext(s.workCtx), round), workq.OriginResync))
	})
	round.Release(err)
	select {
	case err = <-done:
	case <-ctx.Done():
		return
	}
	elapsed := time.Since(start)
	s.observeReconcile(TriggerResync, elapsed, err)
	if err != nil {
		logger.Error().Str("error", s.tokens.redact(err.Error())).Dur("elapsed_ms", elapsed).Msg("resync failed")
		return
	}
	logger.Info().Dur("elapsed_ms", elapsed).Msg("resync done")
}

// safeCall calls fn and turns a panic into an error.
func safeCall(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return fn()
}
