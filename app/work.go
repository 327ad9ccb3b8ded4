package app

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/plural"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// tracker counts webhook deliveries whose work is queued or running, so that shutdown can
// wait for them; once closed it accepts no more.
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

// msgDuplicateDelivery is logged, with the delivery ID, for each redelivery that is skipped.
const msgDuplicateDelivery = "webhook skipped: delivery already processed"

// deliveryRound is the round of work of one delivery: it ends when every key the delivery
// named, and every key their runs named in turn, has run. Then the delivery is logged as
// processed (or failed, with the errors of the runs that gave up), with the time it took.
func (s *Server) deliveryRound(ctx context.Context, event, deliveryID string, payload []byte, seen *deliveryLRU) *workq.Round {
	start := time.Now()
	logCtx := zerolog.Ctx(ctx).WithContext(context.Background())
	return workq.NewRound(func(err error) {
		defer s.inflight.done()
		if err != nil && seen != nil {
			seen.forget(deliveryID) // a redelivery is processed again
		}
		s.finishEvent(logCtx, event, payload, time.Since(start), err)
	})
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
