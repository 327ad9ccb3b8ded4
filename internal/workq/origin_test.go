package workq

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// origins runs keys and records the origin of each run and of the keys it adds.
type origins struct {
	mu   sync.Mutex
	seen map[string][]string // key name → origins of its runs, in order
}

func (o *origins) record(name, origin string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen[name] = append(o.seen[name], origin)
}

func (o *origins) of(name string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.seen[name]...)
}

func TestARunCarriesTheOriginOfTheNewestAddCoalescedIntoIt(t *testing.T) {
	o := &origins{seen: map[string][]string{}}
	var q *Queue
	failed := false
	run := func(ctx context.Context, key Key, _ Need) error {
		o.record(key.Name, OriginOf(ctx))
		switch key.Name {
		case "branch": // a run's adds inherit its origin
			return q.Add(ctx, envKey("dev"), nil)
		case "flaky": // a retry keeps the origin
			if !failed {
				failed = true
				return errors.New("once")
			}
		case "poller": // a wait's own timer
			if len(o.of("poller")) == 1 {
				RequeueAfter(ctx, time.Millisecond)
			}
		}
		return nil
	}
	q = New(context.Background(), "work", run, WithRetries(3, time.Millisecond, time.Millisecond))
	require.NoError(t, waitRound(t, func(ctx context.Context) {
		require.NoError(t, q.Add(WithOrigin(ctx, "delivery-1"), envKey("branch"), nil))
		require.NoError(t, q.Add(ctx, envKey("branch"), nil), "an add without an origin keeps the one waiting")
		require.NoError(t, q.Add(WithOrigin(ctx, "delivery-2"), envKey("branch"), nil))
		require.NoError(t, q.Add(WithOrigin(ctx, OriginResync), envKey("flaky"), nil))
		require.NoError(t, q.Add(WithOrigin(ctx, "delivery-3"), envKey("poller"), nil))
		q.Start()
	}))
	require.Eventually(t, func() bool { return len(o.of("poller")) == 2 }, 30*time.Second, time.Millisecond, "the poll ran")
	require.Equal(t, []string{"delivery-2"}, o.of("branch"), "three adds, one run, the newest delivery")
	require.Equal(t, []string{"delivery-2"}, o.of("dev"), "work made due by a run names the run's origin")
	require.Equal(t, []string{OriginResync, OriginResync}, o.of("flaky"))
	require.Equal(t, []string{"delivery-3", OriginPoll}, o.of("poller"))

	q.AddAfter(envKey("timer"), time.Millisecond)
	require.Eventually(t, func() bool { return len(o.of("timer")) == 1 }, 30*time.Second, time.Millisecond)
	require.Equal(t, []string{OriginPoll}, o.of("timer"))
	require.NoError(t, q.Stop(context.Background()))
}
