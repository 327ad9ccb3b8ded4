package workq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rcrowley/go-metrics"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/syncbuf"
)

// names is a need: the set of names every coalesced add asked for.
type names []string

func (n names) Merge(later Need) Need {
	out := slices.Clone(n)
	for _, s := range later.(names) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return names(out)
}

// recorder runs keys: it records each run's need, can hold a key's run until released, and
// counts how many runs of a key are in progress at once.
type recorder struct {
	mu       sync.Mutex
	runs     map[Key][]Need
	inFlight map[Key]int
	maxIn    map[Key]int
	started  chan Key
	gates    map[Key]chan struct{}
	fail     func(key Key, attempt int) error
}

func newRecorder() *recorder {
	return &recorder{runs: map[Key][]Need{}, inFlight: map[Key]int{}, maxIn: map[Key]int{},
		started: make(chan Key, 1000), gates: map[Key]chan struct{}{}}
}

// hold makes the runs of key wait until the returned function is called.
func (r *recorder) hold(key Key) (release func()) {
	ch := make(chan struct{})
	r.mu.Lock()
	r.gates[key] = ch
	r.mu.Unlock()
	return func() { close(ch) }
}

func (r *recorder) run(ctx context.Context, key Key, need Need) error {
	r.mu.Lock()
	r.inFlight[key]++
	r.maxIn[key] = max(r.maxIn[key], r.inFlight[key])
	gate := r.gates[key]
	r.mu.Unlock()
	r.started <- key
	if gate != nil {
		<-gate
	}
	r.mu.Lock()
	r.inFlight[key]--
	r.runs[key] = append(r.runs[key], need)
	r.mu.Unlock()
	if r.fail != nil {
		n, _ := Attempt(ctx)
		return r.fail(key, n)
	}
	return nil
}

func (r *recorder) needs(key Key) []Need {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.runs[key])
}

// waitRound adds under a round and waits until the round is done, returning its error.
func waitRound(t *testing.T, add func(ctx context.Context)) error {
	t.Helper()
	done := make(chan error, 1)
	r := NewRound(func(err error) { done <- err })
	add(WithRound(context.Background(), r))
	r.Release(nil)
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the round never ended")
		return nil
	}
}

func envKey(name string) Key { return Key{Kind: "environment", Inst: 1, Repo: "o/cp", Name: name} }

func TestAddsOfAWaitingKeyCoalesceIntoOneRunWithEveryNeed(t *testing.T) {
	rec := newRecorder()
	reg := metrics.NewRegistry()
	q := New(context.Background(), "work", rec.run, WithWorkers(4), WithMetrics(reg))
	key := envKey("dev")
	err := waitRound(t, func(ctx context.Context) {
		for i := range 500 {
			require.NoError(t, q.Add(ctx, key, names{fmt.Sprintf("branch-%d", i%3)}))
		}
		q.Start()
	})
	require.NoError(t, err)
	require.Equal(t, []Need{names{"branch-0", "branch-1", "branch-2"}}, rec.needs(key), "500 adds, one run with every need")
	require.EqualValues(t, 499, metrics.GetOrRegisterCounter(labeled(MetricCoalesced, "queue", "work", "kind", "environment"), reg).Count())
	require.Zero(t, q.Keys())
	require.NoError(t, q.Stop(context.Background()))
}

func TestAKeyRunsOnceAtATimeAndAnAddDuringItsRunRunsItOnceMore(t *testing.T) {
	rec := newRecorder()
	q := New(context.Background(), "work", rec.run, WithWorkers(4))
	q.Start()
	dev, stage := envKey("dev"), envKey("stage")
	release := rec.hold(dev)
	done := make(chan error, 1)
	round := NewRound(func(err error) { done <- err })
	ctx := WithRound(context.Background(), round)
	require.NoError(t, q.Add(ctx, dev, names{"first"}))
	require.Equal(t, dev, <-rec.started)
	// While dev runs, 100 more adds of dev wait as one run; stage runs at once on another worker.
	for i := range 100 {
		require.NoError(t, q.Add(ctx, dev, names{fmt.Sprintf("later-%02d", i%2)}))
	}
	require.NoError(t, q.Add(ctx, stage, names{"other"}))
	require.Equal(t, stage, <-rec.started, "another key is not blocked by the running one")
	round.Release(nil)
	require.Eventually(t, func() bool { return len(rec.needs(stage)) == 1 }, 30*time.Second, time.Millisecond)
	release()
	require.NoError(t, <-done)
	require.Equal(t, []Need{names{"first"}, names{"later-00", "later-01"}}, rec.needs(dev))
	require.Equal(t, 1, rec.maxIn[dev], "never two runs of one key at once")
	require.NoError(t, q.Stop(context.Background()))
}

func TestFailedRunsAreRetriedWithBackoffKeepingTheirNeeds(t *testing.T) {
	rec := newRecorder()
	rec.fail = func(_ Key, attempt int) error {
		if attempt < 3 {
			return fmt.Errorf("GitHub answered 502 (attempt %d)", attempt)
		}
		return nil
	}
	logs := &syncbuf.Buffer{}
	reg := metrics.NewRegistry()
	q := New(context.Background(), "work", rec.run, WithRetries(5, 4*time.Millisecond, time.Second),
		WithLogger(zerolog.New(logs)), WithMetrics(reg))
	q.Start()
	key := envKey("dev")
	require.NoError(t, waitRound(t, func(ctx context.Context) { require.NoError(t, q.Add(ctx, key, names{"dev"})) }))
	require.Equal(t, []Need{names{"dev"}, names{"dev"}, names{"dev"}}, rec.needs(key), "every attempt keeps the need")
	var waits []float64
	for _, line := range bytes.Split(bytes.TrimSpace([]byte(logs.String())), []byte("\n")) {
		var entry struct {
			Message string  `json:"message"`
			Wait    float64 `json:"retry_in_ms"`
			Attempt int     `json:"attempt"`
		}
		require.NoError(t, json.Unmarshal(line, &entry))
		require.Equal(t, "work failed; retrying", entry.Message)
		waits = append(waits, entry.Wait)
	}
	require.Equal(t, []float64{4, 8}, waits, "the backoff doubles")
	require.EqualValues(t, 2, metrics.GetOrRegisterCounter(labeled(MetricRetries, "queue", "work", "kind", "environment"), reg).Count())
	require.NoError(t, q.Stop(context.Background()))
}

func TestRetriesAreBoundedAndTheRoundGetsTheError(t *testing.T) {
	rec := newRecorder()
	rec.fail = func(Key, int) error { return errors.New("always broken") }
	reg := metrics.NewRegistry()
	q := New(context.Background(), "work", rec.run, WithRetries(3, time.Millisecond, time.Millisecond), WithMetrics(reg))
	q.Start()
	err := waitRound(t, func(ctx context.Context) { require.NoError(t, q.Add(ctx, envKey("dev"), nil)) })
	require.ErrorContains(t, err, "always broken")
	require.Len(t, rec.needs(envKey("dev")), 3, "three attempts, then the key waits for the next add")
	require.EqualValues(t, 1, metrics.GetOrRegisterCounter(labeled(MetricFailures, "queue", "work", "kind", "environment"), reg).Count())
	require.Zero(t, q.Keys())

	rec.fail = func(Key, int) error { return Permanent(errors.New("branch belongs to another environment")) }
	err = waitRound(t, func(ctx context.Context) { require.NoError(t, q.Add(ctx, envKey("qa"), nil)) })
	require.ErrorContains(t, err, "another environment")
	require.Len(t, rec.needs(envKey("qa")), 1, "a permanent error is not retried")
	require.NoError(t, q.Stop(context.Background()))
}

func TestARoundEndsWhenTheKeysItsRunsAddedHaveRun(t *testing.T) {
	var q *Queue
	var order []string
	var mu sync.Mutex
	run := func(ctx context.Context, key Key, _ Need) error {
		mu.Lock()
		order = append(order, key.Name)
		mu.Unlock()
		if key.Kind == "branch" {
			for _, env := range []string{"dev", "stage"} {
				if err := q.Add(ctx, envKey(env), nil); err != nil {
					return err
				}
			}
		}
		return nil
	}
	q = New(context.Background(), "work", run, WithWorkers(2))
	q.Start()
	require.NoError(t, waitRound(t, func(ctx context.Context) {
		require.NoError(t, q.Add(ctx, Key{Kind: "branch", Inst: 1, Repo: "o/w", Name: "main"}, nil))
	}))
	mu.Lock()
	defer mu.Unlock()
	require.ElementsMatch(t, []string{"main", "dev", "stage"}, order, "the round waited for the environments")
	require.NoError(t, q.Stop(context.Background()))
}

func TestTheQueueIsBoundedByDistinctKeysNotByAdds(t *testing.T) {
	rec := newRecorder()
	q := New(context.Background(), "work", rec.run, WithMaxKeys(2))
	ctx := context.Background()
	require.NoError(t, q.Add(ctx, envKey("dev"), nil))
	require.NoError(t, q.Add(ctx, envKey("stage"), nil))
	for range 1000 {
		require.NoError(t, q.Add(ctx, envKey("dev"), nil), "an add that coalesces is never refused")
	}
	require.ErrorIs(t, q.Add(ctx, envKey("qa"), nil), ErrFull)
	require.ErrorContains(t, q.Add(ctx, envKey("qa"), nil), "queueSize")
	q.Start()
	require.Eventually(t, func() bool { return q.Keys() == 0 }, 30*time.Second, time.Millisecond)
	require.NoError(t, q.Add(ctx, envKey("qa"), nil), "keys that ran no longer count")
	require.NoError(t, q.Stop(context.Background()))
}

func TestRequeueAfterRunsTheKeyAgainWithoutHoldingTheRound(t *testing.T) {
	var runs atomic.Int32
	run := func(ctx context.Context, _ Key, _ Need) error {
		if runs.Add(1) < 3 {
			RequeueAfter(ctx, time.Millisecond)
		}
		return nil
	}
	q := New(context.Background(), "work", run)
	q.Start()
	require.NoError(t, waitRound(t, func(ctx context.Context) { require.NoError(t, q.Add(ctx, envKey("dev"), nil)) }))
	require.Eventually(t, func() bool { return runs.Load() == 3 }, 30*time.Second, time.Millisecond, "the poll ran twice more")
	require.NoError(t, q.Stop(context.Background()))
}

func TestStopReleasesTheRoundsOfKeysThatNeverRan(t *testing.T) {
	rec := newRecorder()
	q := New(context.Background(), "work", rec.run)
	done := make(chan error, 1)
	round := NewRound(func(err error) { done <- err })
	require.NoError(t, q.Add(WithRound(context.Background(), round), envKey("dev"), nil))
	round.Release(nil)
	require.NoError(t, q.Stop(context.Background()), "nothing runs: the workers were never started")
	require.ErrorIs(t, <-done, ErrStopped)
	require.ErrorIs(t, q.Add(context.Background(), envKey("dev"), nil), ErrStopped)
}
