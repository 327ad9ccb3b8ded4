package hub

import (
	"context"
	"sync"
)

// maxKnownCommits bounds the commits remembered as described; past it, the set starts again.
const maxKnownCommits = 100000

// commitQueue bounds the commits waiting to be described; more are dropped and queued again
// by their next report.
const commitQueue = 1024

// commitCache remembers which GitOps commits were queued for description, so that each is
// read from git once, and queues the new ones.
type commitCache struct {
	mu    sync.Mutex
	seen  map[[3]string]bool
	queue chan [3]string
}

func newCommitCache() *commitCache {
	return &commitCache{seen: map[[3]string]bool{}, queue: make(chan [3]string, commitQueue)}
}

// see queues a commit the first time it is seen.
func (c *commitCache) see(cp, env, sha string) {
	k := [3]string{cp, env, sha}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[k] {
		return
	}
	select {
	case c.queue <- k:
		if len(c.seen) >= maxKnownCommits {
			c.seen = map[[3]string]bool{}
		}
		c.seen[k] = true
	default: // full: the next report of this commit queues it again
	}
}

// forget lets a commit be queued again (its description failed).
func (c *commitCache) forget(cp, env, sha string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.seen, [3]string{cp, env, sha})
}

// run returns the loop that describes queued commits with fn until ctx ends.
func (c *commitCache) run(fn func(ctx context.Context, cp, env, sha string)) func(context.Context) {
	return func(ctx context.Context) {
		for {
			select {
			case <-ctx.Done():
				return
			case k := <-c.queue:
				fn(ctx, k[0], k[1], k[2])
			}
		}
	}
}
