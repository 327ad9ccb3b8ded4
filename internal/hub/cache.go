package hub

import (
	"sync"
	"time"
)

// answerTTL is how long an environment's aggregates (clusters by commit and state, drift)
// are served before they are computed again: such a query reads every cluster of the
// environment, so it runs at most once per environment in this period, whatever the number
// of readers. Reports written to the environment make them stale after freshAfterWrite.
const (
	answerTTL       = 10 * time.Second
	freshAfterWrite = time.Second
)

// maxCachedAnswers bounds the cache; past it, it starts again empty.
const maxCachedAnswers = 10000

// answerCache keeps computed aggregates for answerTTL; one caller computes a missing key
// while the others wait for its result.
type answerCache struct {
	now     func() time.Time
	mu      sync.Mutex
	m       map[string]*cached
	written map[string]time.Time // environment → its last write
}

type cached struct {
	ready chan struct{}
	at    time.Time
	value any
	err   error
}

func newAnswerCache(now func() time.Time) *answerCache {
	return &answerCache{now: now, m: map[string]*cached{}, written: map[string]time.Time{}}
}

// wrote notes that reports of an environment were stored.
func (c *answerCache) wrote(env string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.written) >= maxCachedAnswers {
		c.written = map[string]time.Time{}
	}
	c.written[env] = c.now()
}

// stale reports whether a computed entry of env must be computed again.
func (c *answerCache) stale(e *cached, env string) bool {
	age := c.now().Sub(e.at)
	return e.err != nil || age >= answerTTL || (e.at.Before(c.written[env]) && age >= freshAfterWrite)
}

// get returns the value of key (an aggregate of environment env), computing it when it is
// missing or stale.
func (c *answerCache) get(env, key string, compute func() (any, error)) (any, error) {
	c.mu.Lock()
	e, ok := c.m[key]
	if ok {
		select {
		case <-e.ready:
			if c.stale(e, env) {
				ok = false
			}
		default: // being computed: wait for it
		}
	}
	if !ok {
		if len(c.m) >= maxCachedAnswers {
			c.m = map[string]*cached{}
		}
		e = &cached{ready: make(chan struct{})}
		c.m[key] = e
		c.mu.Unlock()
		e.value, e.err = compute()
		e.at = c.now()
		close(e.ready)
		return e.value, e.err
	}
	c.mu.Unlock()
	<-e.ready
	return e.value, e.err
}

// cachedOf returns the typed value of key from the cache.
func cachedOf[T any](c *answerCache, env, key string, compute func() (T, error)) (T, error) {
	v, err := c.get(env, env+"\x00"+key, func() (any, error) { return compute() })
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}
