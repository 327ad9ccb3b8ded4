package fleetview

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// accessCache remembers for a short while whether a user's token can read a repository, so
// that a page load does not ask GitHub again for every control plane.
type accessCache struct {
	mu      sync.Mutex
	ttl     time.Duration
	now     func() time.Time
	entries map[[32]byte]accessEntry
}

type accessEntry struct {
	ok      bool
	expires time.Time
}

// maxAccessEntries bounds the cache; past it, it starts again empty.
const maxAccessEntries = 10000

func newAccessCache(ttl time.Duration, now func() time.Time) *accessCache {
	return &accessCache{ttl: ttl, now: now, entries: map[[32]byte]accessEntry{}}
}

// canRead answers from the cache or asks check.
func (c *accessCache) canRead(ctx context.Context, token, repo string, check func(ctx context.Context, token, repo string) (bool, error)) (bool, error) {
	key := sha256.Sum256([]byte(token + "\x00" + repo))
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && c.now().Before(e.expires) {
		return e.ok, nil
	}
	allowed, err := check(ctx, token, repo)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxAccessEntries {
		c.entries = map[[32]byte]accessEntry{}
	}
	c.entries[key] = accessEntry{ok: allowed, expires: c.now().Add(c.ttl)}
	return allowed, nil
}
