package app

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/plural"
)

// tracker counts webhook events that are queued or running, so that shutdown
// can wait for them; once closed it accepts no more.
type tracker struct {
	mu     sync.Mutex
	n      int
	closed bool
	idle   chan struct{}
}

// add registers one more event, or reports false once the tracker is closed.
func (t *tracker) add() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.n++
	return true
}

// done marks one event finished.
func (t *tracker) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n--
	if t.n == 0 && t.idle != nil {
		close(t.idle)
		t.idle = nil
	}
}

// drain closes the tracker and waits until no event is left or ctx ends.
func (t *tracker) drain(ctx context.Context) error {
	t.mu.Lock()
	t.closed = true
	if t.n == 0 {
		t.mu.Unlock()
		return nil
	}
	if t.idle == nil {
		t.idle = make(chan struct{})
	}
	idle := t.idle
	t.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		t.mu.Lock()
		n := t.n
		t.mu.Unlock()
		return fmt.Errorf("%s still queued or running: %w", plural.Count(n, "webhook event"), ctx.Err())
	}
}

// drainingScheduler tracks every event it hands to the queue and drops redeliveries of
// recent ones (same X-GitHub-Delivery); it sees only deliveries whose signature is valid.
type drainingScheduler struct {
	inner githubapp.Scheduler
	s     *Server
	seen  deliveryLRU
}

// Schedule queues d with its handler wrapped for tracking, timing and logging. A delivery
// already scheduled recently is acknowledged and skipped.
func (d *drainingScheduler) Schedule(ctx context.Context, disp githubapp.Dispatch) error {
	if !d.seen.firstTime(disp.DeliveryID) {
		eventLogger(ctx, disp.Payload).Info().Msg(msgDuplicateDelivery)
		return nil
	}
	if !d.s.inflight.add() {
		d.seen.forget(disp.DeliveryID)
		return errShuttingDown
	}
	disp.Handler = trackedHandler{inner: disp.Handler, s: d.s, seen: &d.seen}
	if err := d.inner.Schedule(ctx, disp); err != nil {
		d.s.inflight.done()
		d.seen.forget(disp.DeliveryID)
		return err
	}
	return nil
}

// msgDuplicateDelivery is logged, with the delivery ID, for each redelivery that is skipped.
const msgDuplicateDelivery = "webhook skipped: delivery already processed"

// deriveContext gives queued work a context detached from the HTTP request:
// it keeps the delivery's logger and ends only when shutdown gives up waiting.
func (s *Server) deriveContext(ctx context.Context) context.Context {
	return zerolog.Ctx(ctx).WithContext(githubapp.InitializeResponder(s.workCtx))
}

// onAsyncError is a no-op: trackedHandler already logged and counted the error.
func (s *Server) onAsyncError(context.Context, githubapp.Dispatch, error) {}

// trackedHandler runs one event under handlerTimeout, turns a panic into an
// error, records metrics and logs the outcome.
type trackedHandler struct {
	inner githubapp.EventHandler
	s     *Server
	seen  *deliveryLRU // forgets a delivery whose processing failed, so that it can be sent again
}

// Handles returns the wrapped handler's events.
func (h trackedHandler) Handles() []string { return h.inner.Handles() }

// Handle runs the wrapped handler.
func (h trackedHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) (err error) {
	defer h.s.inflight.done()
	ctx, cancel := context.WithTimeout(ctx, h.s.cfg.HandlerTimeout.Std())
	defer cancel()
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in %s handler: %v\n%s", eventType, r, debug.Stack())
		}
		if err != nil && h.seen != nil {
			h.seen.forget(deliveryID)
		}
		h.s.finishEvent(ctx, eventType, payload, time.Since(start), err)
	}()
	return h.inner.Handle(ctx, eventType, deliveryID, payload)
}

// finishEvent records and logs the outcome of one event.
func (s *Server) finishEvent(ctx context.Context, eventType string, payload []byte, elapsed time.Duration, err error) {
	s.observeReconcile(TriggerWebhook, elapsed, err)
	logger := eventLogger(ctx, payload)
	if err != nil {
		s.counter(MetricWebhooksFailed, "event", s.eventLabel(eventType)).Inc(1)
		logger.Error().Str("error", s.tokens.redact(err.Error())).Dur("elapsed_ms", elapsed).Msg("webhook processing failed")
		return
	}
	logger.Info().Dur("elapsed_ms", elapsed).Msg("webhook processed")
}

// eventRef holds the payload fields that identify where an event comes from.
type eventRef struct {
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	Repository struct {
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"repository"`
}

// eventLogger adds the installation and repository of the payload to the
// context logger, for the app's own outcome line.
func eventLogger(ctx context.Context, payload []byte) *zerolog.Logger {
	var ref eventRef
	lc := zerolog.Ctx(ctx).With()
	if json.Unmarshal(payload, &ref) == nil {
		if ref.Installation.ID > 0 {
			lc = lc.Int64(githubapp.LogKeyInstallationID, ref.Installation.ID)
		}
		if ref.Repository.Name != "" {
			lc = lc.Str(githubapp.LogKeyRepositoryOwner, ref.Repository.Owner.Login).Str(githubapp.LogKeyRepositoryName, ref.Repository.Name)
		}
	}
	l := lc.Logger()
	return &l
}
