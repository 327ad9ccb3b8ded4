package workq

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/rcrowley/go-metrics"
	"github.com/rs/zerolog"
	"k8s.io/client-go/util/workqueue"
)

// ErrFull is returned by Add for a key not already waiting when the queue holds its maximum of
// distinct keys. An add of a key that is waiting is never refused: it coalesces.
var ErrFull = errors.New("work queue full")

// ErrStopped is returned by Add once the queue is stopping, and given to the rounds of the
// keys that never ran.
var ErrStopped = errors.New("work queue stopped")

// Func runs the work of a key with what the coalesced adds asked of it.
type Func func(ctx context.Context, key Key, need Need) error

// Queue runs keys of work with a pool of workers: one run per key at a time, adds coalesced
// into the waiting run, failures retried with backoff. Create it with New and Start it.
type Queue struct {
	name                string
	run                 Func
	workers             int
	maxKeys             int // 0: no bound
	attempts            int
	timeout             time.Duration
	logger              zerolog.Logger
	redact              func(string) string
	reg                 metrics.Registry
	now                 func() time.Time
	base                context.Context
	baseDelay, maxDelay time.Duration

	wq      workqueue.TypedRateLimitingInterface[Key]
	limiter workqueue.TypedRateLimiter[Key]

	mu      sync.Mutex
	stopped bool
	entries map[Key]*entry
	wg      sync.WaitGroup
}

// entry is the state of one key: what its next run must do and who waits for it.
type entry struct {
	wanted   bool          // a run is due: the key is in the queue, or will be after a delay
	need     Need          // merged needs of the adds since the last run began
	rounds   []*Round      // rounds held until that run ends
	since    time.Time     // when the key became wanted, for its latency
	failures int           // consecutive failed runs of this need
	after    time.Duration // a delayed add is pending (for the bound on keys, it still waits)
	origin   string        // what made the next run due: the newest add's origin, or OriginPoll
}

// Option configures a Queue.
type Option func(*Queue)

// WithWorkers sets the number of workers (default 1).
func WithWorkers(n int) Option { return func(q *Queue) { q.workers = max(n, 1) } }

// WithMaxKeys bounds the distinct keys waiting (default 0: no bound).
func WithMaxKeys(n int) Option { return func(q *Queue) { q.maxKeys = n } }

// WithRetries sets how many times a key is tried for one need (default 6) and the backoff:
// base doubles after each failure up to max (default 1s and 1m).
func WithRetries(attempts int, base, max time.Duration) Option {
	return func(q *Queue) { q.attempts, q.baseDelay, q.maxDelay = attempts, base, max }
}

// WithRunTimeout bounds each run (default 0: no bound).
func WithRunTimeout(d time.Duration) Option { return func(q *Queue) { q.timeout = d } }

// WithLogger sets the logger of retries and failures.
func WithLogger(l zerolog.Logger) Option { return func(q *Queue) { q.logger = l } }

// WithRedact filters the text of errors before they are logged (to hide tokens they may
// hold); default none.
func WithRedact(redact func(string) string) Option { return func(q *Queue) { q.redact = redact } }

// WithMetrics registers the queue's metrics in reg.
func WithMetrics(reg metrics.Registry) Option { return func(q *Queue) { q.reg = reg } }

// WithClock sets the clock of latencies (default time.Now).
func WithClock(now func() time.Time) Option { return func(q *Queue) { q.now = now } }

// New returns a queue named name (its metrics label) that runs keys with run; the context of
// every run derives from ctx.
func New(ctx context.Context, name string, run Func, opts ...Option) *Queue {
	q := &Queue{name: name, run: run, workers: 1, attempts: 6, baseDelay: time.Second, maxDelay: time.Minute,
		logger: zerolog.Nop(), redact: func(s string) string { return s }, reg: metrics.NewRegistry(), now: time.Now, base: ctx, entries: map[Key]*entry{}}
	for _, o := range opts {
		o(q)
	}
	q.attempts = max(q.attempts, 1)
	q.limiter = workqueue.NewTypedItemExponentialFailureRateLimiter[Key](q.baseDelay, q.maxDelay)
	q.wq = workqueue.NewTypedRateLimitingQueueWithConfig(q.limiter,
		workqueue.TypedRateLimitingQueueConfig[Key]{Name: name, MetricsProvider: provider{q.reg}})
	q.reg.GetOrRegister(labeled(MetricKeys, "queue", name), metrics.NewFunctionalGauge(func() int64 {
		return int64(q.Keys())
	}))
	return q
}

// Start starts the workers.
func (q *Queue) Start() {
	for range q.workers {
		q.wg.Add(1)
		go q.work()
	}
}

// Add asks for key to run, with need. When the key is already waiting, the add coalesces
// into that run (needs merged). The rounds ctx carries (see WithRound) are held until the run
// that does this add's work ends.
func (q *Queue) Add(ctx context.Context, key Key, need Need) error {
	rounds := roundsOf(ctx)
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return ErrStopped
	}
	e := q.entries[key]
	if e == nil {
		if q.maxKeys > 0 && q.waiting() >= q.maxKeys {
			q.mu.Unlock()
			q.counter(MetricRefused, key.Kind).Inc(1)
			return fmt.Errorf("%w: %d keys wait (setting queueSize)", ErrFull, q.maxKeys)
		}
		e = &entry{}
		q.entries[key] = e
	}
	coalesced := e.wanted
	q.want(e)
	e.need = merge(e.need, need)
	if o := OriginOf(ctx); o != "" {
		e.origin = o
	}
	for _, r := range rounds {
		r.hold()
	}
	e.rounds = append(e.rounds, rounds...)
	q.mu.Unlock()
	if coalesced {
		q.counter(MetricCoalesced, key.Kind).Inc(1)
	}
	q.wq.Add(key)
	return nil
}

// AddAfter asks for key to run after d, with no need and no round: a poll.
func (q *Queue) AddAfter(key Key, d time.Duration) {
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return
	}
	e := q.entries[key]
	if e == nil {
		e = &entry{}
		q.entries[key] = e
	}
	q.wantAfter(e, d)
	q.mu.Unlock()
	q.wq.AddAfter(key, d)
}

// want marks e as due; q.mu is held.
func (q *Queue) want(e *entry) {
	if !e.wanted {
		e.wanted, e.since = true, q.now()
	}
}

// wantAfter marks e as due after d, by its own timer unless an add says otherwise; q.mu is
// held.
func (q *Queue) wantAfter(e *entry, d time.Duration) {
	if !e.wanted {
		e.wanted, e.since = true, q.now().Add(d)
	}
	e.after = d
	e.origin = cmp.Or(e.origin, OriginPoll)
}

// waiting counts the keys due; q.mu is held.
func (q *Queue) waiting() int {
	n := 0
	for _, e := range q.entries {
		if e.wanted {
			n++
		}
	}
	return n
}

// Keys returns the number of distinct keys waiting, delayed ones included.
func (q *Queue) Keys() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting()
}

// work is one worker: it runs keys until the queue shuts down.
func (q *Queue) work() {
	defer q.wg.Done()
	for {
		key, shutdown := q.wq.Get()
		if shutdown {
			return
		}
		q.process(key)
		q.wq.Done(key)
	}
}

// process runs key once if a run is due (an earlier run may already have done the work of
// this add), then retries, polls or forgets it.
func (q *Queue) process(key Key) {
	q.mu.Lock()
	e := q.entries[key]
	if e == nil || !e.wanted {
		q.mu.Unlock()
		return
	}
	need, rounds, failures, since, origin := e.need, e.rounds, e.failures, e.since, e.origin
	e.wanted, e.need, e.rounds, e.after, e.origin = false, nil, nil, 0, ""
	q.mu.Unlock()

	r := &run{key: key, attempt: failures + 1, last: failures+1 >= q.attempts}
	err := q.call(WithOrigin(q.base, origin), r, need, rounds)
	retry := err != nil && !r.last && !IsPermanent(err)

	q.mu.Lock()
	if retry {
		e.failures = failures + 1
		e.need = merge(need, e.need)
		e.rounds = append(rounds, e.rounds...)
		e.origin = cmp.Or(e.origin, origin)
		q.want(e)
		e.since = since
	} else {
		e.failures = 0
		if r.after > 0 {
			q.wantAfter(e, r.after)
		}
		if !e.wanted {
			delete(q.entries, key)
		}
	}
	q.mu.Unlock()
	q.finish(r, err, retry, rounds, since)
}

// finish schedules what follows a run and releases its rounds unless it is retried.
func (q *Queue) finish(r *run, err error, retry bool, rounds []*Round, since time.Time) {
	log := q.logger.With().Str("key", r.key.String()).Int("attempt", r.attempt).Logger()
	switch {
	case retry:
		wait := q.limiter.When(r.key)
		q.counter(MetricRetries, r.key.Kind).Inc(1)
		log.Warn().Str("error", q.redact(err.Error())).Dur("retry_in_ms", wait).Msg("work failed; retrying")
		q.wq.AddAfter(r.key, wait)
		return
	case err != nil:
		q.counter(MetricFailures, r.key.Kind).Inc(1)
		log.Error().Str("error", q.redact(err.Error())).Msg("work failed; giving up until the next event or resync")
	}
	q.limiter.Forget(r.key)
	if r.after > 0 {
		q.wq.AddAfter(r.key, r.after)
	}
	metrics.GetOrRegisterTimer(labeled(MetricKeyLatency, "queue", q.name, "kind", r.key.Kind), q.reg).Update(q.now().Sub(since))
	release(rounds, err)
}

// call runs the key's function under the run timeout, its rounds and origin in the context
// (derived from base), and turns a panic into an error.
func (q *Queue) call(base context.Context, r *run, need Need, rounds []*Round) (err error) {
	ctx := context.WithValue(withRounds(base, rounds), runKey{}, r)
	if q.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.timeout)
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic running %s: %v\n%s", r.key, p, debug.Stack())
		}
	}()
	return q.run(ctx, r.key, need)
}

// counter returns one of the queue's counters for a kind of key.
func (q *Queue) counter(name, kind string) metrics.Counter {
	return metrics.GetOrRegisterCounter(labeled(name, "queue", q.name, "kind", kind), q.reg)
}

// Stop stops taking adds and waits, until ctx ends, for the workers to run what is ready;
// delayed keys (retries, polls) are dropped. The rounds of keys that never ran are released
// with ErrStopped.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()
	drained := make(chan struct{})
	go func() {
		q.wq.ShutDownWithDrain()
		q.wg.Wait()
		close(drained)
	}()
	var err error
	select {
	case <-drained:
	case <-ctx.Done():
		q.wq.ShutDown()
		err = fmt.Errorf("work queue %s: runs still in progress: %w", q.name, ctx.Err())
	}
	q.mu.Lock()
	var left []*Round
	for k, e := range q.entries {
		if e.wanted {
			left = append(left, e.rounds...)
			e.rounds = nil
			delete(q.entries, k)
		}
	}
	q.mu.Unlock()
	release(left, ErrStopped)
	return err
}
