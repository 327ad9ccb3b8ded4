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
)

// readHeaderTimeout bounds how long a client may take to send request headers.
const readHeaderTimeout = 10 * time.Second

// Run listens on server.address, runs the resync at start and every
// resync.interval, and serves until ctx ends. It then shuts down gracefully:
// it stops accepting requests, lets queued and running webhook work and the
// current resync finish within server.shutdownTimeout, and returns. Work still
// running after that has its context cancelled and is reported in the error.
func (s *Server) Run(ctx context.Context) error {
	if !s.started.CompareAndSwap(false, true) {
		return errors.New("app: Run called twice")
	}
	ln, err := net.Listen("tcp", s.cfg.Server.Address)
	if err != nil {
		return fmt.Errorf("app: listen on %s: %w", s.cfg.Server.Address, err)
	}
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ErrorLog:          log.New(s.logger, "", 0),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	s.setAddr(ln.Addr())
	s.logger.Info().Str("address", s.Addr()).Msg("listening")

	loopCtx, stopLoop := context.WithCancel(ctx)
	defer stopLoop()
	resyncDone := s.startResync(loopCtx)

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		runErr = fmt.Errorf("app: serve HTTP: %w", err)
	}
	stopLoop()
	return errors.Join(runErr, s.shutdown(srv, resyncDone))
}

// shutdown stops the HTTP server, then waits for webhook work and the resync
// loop within shutdownTimeout; finally it cancels whatever is left.
func (s *Server) shutdown(srv *http.Server, resyncDone <-chan struct{}) error {
	s.logger.Info().Msg("shutting down: refusing new webhooks, waiting for queued and running work")
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Server.ShutdownTimeout.Std())
	defer cancel()
	defer s.stopWork()
	var errs []error
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
		errs = append(errs, fmt.Errorf("app: stop HTTP server: %w", err))
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

// startResync runs the resync loop in the background; the returned channel
// closes when the loop has stopped and its last run has returned.
func (s *Server) startResync(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if s.opts.resync == nil {
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
// so two runs never overlap, until ctx ends.
func (s *Server) resyncLoop(ctx context.Context) {
	interval := s.cfg.Resync.Interval.Std()
	for ctx.Err() == nil {
		s.runResync()
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

// runResync runs the resync once; it is detached from Run's context so that a
// run in progress at shutdown may finish. Errors and panics are logged, not fatal.
func (s *Server) runResync() {
	logger := s.logger.With().Str("trigger", TriggerResync).Logger()
	ctx := logger.WithContext(s.workCtx)
	start := time.Now()
	err := safeCall(func() error { return s.opts.resync(ctx) })
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
