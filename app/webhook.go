package app

import (
	"errors"
	"net/http"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"
)

// maxPayloadBytes is GitHub's cap on webhook payloads (25 MB).
const maxPayloadBytes = 25 << 20

// errShuttingDown refuses deliveries that arrive while the server drains.
var errShuttingDown = errors.New("app: shutting down")

// newWebhookHandler builds the POST /api/github/hook handler: go-githubapp's
// dispatcher checks the signature and hands each event to a bounded queue of
// workers, so GitHub gets its answer before the event is processed.
func (s *Server) newWebhookHandler() http.Handler {
	queue := githubapp.QueueAsyncScheduler(s.cfg.QueueSize, s.cfg.Workers,
		githubapp.WithSchedulingMetrics(s.registry),
		githubapp.WithAsyncErrorCallback(s.onAsyncError),
		githubapp.WithContextDeriver(s.deriveContext),
	)
	dispatcher := githubapp.NewEventDispatcher(s.opts.handlers, s.cfg.GitHub.App.WebhookSecret.Value(),
		githubapp.WithErrorCallback(s.onDispatchError),
		githubapp.WithScheduler(&drainingScheduler{inner: queue, s: s}),
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxPayloadBytes)
		s.counter(MetricWebhooksReceived, "event", s.eventLabel(r.Header.Get("X-GitHub-Event"))).Inc(1)
		dispatcher.ServeHTTP(w, r.WithContext(s.logger.WithContext(r.Context())))
	})
}

// onDispatchError answers a delivery that was not scheduled: 400 for a bad
// signature or payload, 413 for an oversized one, 503 when the queue is full
// or the server is shutting down.
func (s *Server) onDispatchError(w http.ResponseWriter, r *http.Request, err error) {
	s.counter(MetricWebhooksFailed, "event", s.eventLabel(r.Header.Get("X-GitHub-Event"))).Inc(1)
	logger := zerolog.Ctx(r.Context())
	var ve githubapp.ValidationError
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &ve) && errors.As(ve.Cause, &tooLarge):
		logger.Warn().Err(ve.Cause).Msg("rejected webhook: payload too large")
		http.Error(w, "payload too large", http.StatusRequestEntityTooLarge)
	case errors.As(err, &ve):
		logger.Warn().Err(ve.Cause).Msg("rejected webhook: invalid signature, headers or payload")
		http.Error(w, "invalid webhook signature, headers or payload", http.StatusBadRequest)
	case errors.Is(err, githubapp.ErrCapacityExceeded):
		logger.Warn().Msg("rejected webhook: queue full")
		http.Error(w, "queue full, retry later", http.StatusServiceUnavailable)
	case errors.Is(err, errShuttingDown):
		logger.Warn().Msg("rejected webhook: shutting down")
		http.Error(w, "shutting down, retry later", http.StatusServiceUnavailable)
	default:
		logger.Error().Str("error", s.tokens.redact(err.Error())).Msg("webhook dispatch failed")
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
	}
}
