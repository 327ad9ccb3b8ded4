package handlers

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// queued records the keys added, with their needs, in order.
type queued struct {
	keys  []workq.Key
	needs []workq.Need
	err   error
}

func (q *queued) Add(_ context.Context, key workq.Key, need workq.Need) error {
	q.keys = append(q.keys, key)
	q.needs = append(q.needs, need)
	return q.err
}

// oneLane runs every key in one work queue, whatever its lane.
type oneLane struct{ q *workq.Queue }

func (l oneLane) Add(ctx context.Context, key workq.Key, need workq.Need) error {
	key.Lane = workq.LaneMain
	return l.q.Add(ctx, key, need)
}

// running is a core whose work runs in a real work queue with one worker, as the app runs it:
// work made due by work runs too, in the order it was added.
type running struct {
	t *testing.T
	c *Core
	q *workq.Queue
}

// run starts a work queue over c; failed work is tried attempts times.
func run(t *testing.T, c *Core, attempts int) *running {
	t.Helper()
	q := workq.New(context.Background(), "test", c.Work, workq.WithRetries(attempts, time.Millisecond, time.Millisecond))
	c.Queue = oneLane{q}
	q.Start()
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
	return &running{t: t, c: c, q: q}
}

// do calls add under a round and waits until every key the round holds has run; it returns
// the round's error.
func (r *running) do(add func(ctx context.Context) error) error {
	r.t.Helper()
	done := make(chan error, 1)
	round := workq.NewRound(func(err error) { done <- err })
	err := add(workq.WithRound(context.Background(), round))
	round.Release(err)
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		r.t.Fatal("the work never ended")
		return nil
	}
}

// route routes an event and runs its work.
func (r *running) route(event string, ev any) error {
	r.t.Helper()
	return r.do(func(ctx context.Context) error {
		echo, err := r.c.Route(ctx, event, payload(r.t, ev))
		require.False(r.t, echo)
		return err
	})
}
