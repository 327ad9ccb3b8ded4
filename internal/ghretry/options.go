package ghretry

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"
)

// Defaults of the options.
const (
	DefaultMaxAttempts    = 5                // attempts, the first included
	DefaultMaxWait        = time.Minute      // longest single wait
	DefaultBaseDelay      = time.Second      // first backoff delay
	DefaultMaxDelay       = 30 * time.Second // backoff cap
	DefaultSecondaryDelay = time.Minute      // wait after a secondary limit without Retry-After
)

// Option configures the transport returned by New.
type Option func(*transport)

// Attempt describes a retry about to happen; it is passed to the WithOnRetry hook.
type Attempt struct {
	Request    *http.Request // the caller's request
	Attempt    int           // number of the attempt that failed, from 1
	Wait       time.Duration // wait before the next attempt
	StatusCode int           // status of the failed attempt, 0 without a response
	Err        error         // transport error of the failed attempt, if any
	Reason     Reason        // why the request is retried
}

// WithMaxAttempts sets the total number of attempts, the first included (values below 1 mean 1).
func WithMaxAttempts(n int) Option {
	return func(t *transport) { t.maxAttempts = max(n, 1) }
}

// WithMaxWait sets the longest single wait; when GitHub asks for more, the response is returned as is.
func WithMaxWait(d time.Duration) Option {
	return func(t *transport) { t.maxWait = d }
}

// WithBackoff sets the first exponential backoff delay and its cap.
func WithBackoff(base, maxDelay time.Duration) Option {
	return func(t *transport) { t.baseDelay, t.maxDelay = base, maxDelay }
}

// WithClock sets the clock used to turn X-RateLimit-Reset into a wait.
func WithClock(now func() time.Time) Option {
	return func(t *transport) { t.now = now }
}

// WithSleep sets the function that waits; it must return early with ctx.Err() when ctx ends.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(t *transport) { t.sleep = sleep }
}

// WithJitter sets the random source of backoff jitter; it returns values in [0, 1).
func WithJitter(random func() float64) Option {
	return func(t *transport) { t.random = random }
}

// WithOnRetry sets a hook called before each wait, for logs and metrics.
func WithOnRetry(fn func(Attempt)) Option {
	return func(t *transport) { t.onRetry = fn }
}

// defaults returns a transport with the default options.
func defaults(next http.RoundTripper) *transport {
	return &transport{
		next:           next,
		maxAttempts:    DefaultMaxAttempts,
		maxWait:        DefaultMaxWait,
		baseDelay:      DefaultBaseDelay,
		maxDelay:       DefaultMaxDelay,
		secondaryDelay: DefaultSecondaryDelay,
		now:            time.Now,
		sleep:          sleepContext,
		random:         rand.Float64,
		onRetry:        func(Attempt) {},
	}
}

// sleepContext waits for d or until ctx ends.
func sleepContext(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
