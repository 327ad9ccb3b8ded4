package gitcache

import (
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
)

// WithMaxBytes bounds the cache: once the repositories it holds exceed n bytes, the least
// recently used ones that no one is working on are dropped (and fetched again when next
// needed). 0 is no bound.
func WithMaxBytes(n int64) Option {
	return func(c *Cache) { c.budget.max = n }
}

// Option configures a Cache.
type Option func(*Cache)

// budget tracks the size and last use of every cached repository.
type budget struct {
	max   int64
	mu    sync.Mutex
	size  map[string]int64
	used  map[string]time.Time
	clock func() time.Time
}

// Size returns the bytes the cache holds, as counted.
func (c *Cache) Size() int64 {
	c.budget.mu.Lock()
	defer c.budget.mu.Unlock()
	var total int64
	for _, n := range c.budget.size {
		total += n
	}
	return total
}

// account records a repository's size, as counted while objects came in, and its use, and
// evicts others if the cache is over its bound. The caller holds key's lock.
func (c *Cache) account(key string, repo *git.Repository) {
	n := repositoryBytes(repo)
	b := &c.budget
	b.mu.Lock()
	b.size[key], b.used[key] = n, b.clock()
	victims := b.overBudget(key)
	b.mu.Unlock()
	for _, v := range victims {
		c.evict(v)
	}
}

// touch records a use of a repository that did not change.
func (c *Cache) touch(key string) {
	c.budget.mu.Lock()
	if _, ok := c.budget.size[key]; ok {
		c.budget.used[key] = c.budget.clock()
	}
	c.budget.mu.Unlock()
}

// overBudget lists the least recently used repositories to drop, never keep. b.mu is held.
func (b *budget) overBudget(keep string) []string {
	if b.max <= 0 {
		return nil
	}
	var total int64
	keys := make([]string, 0, len(b.size))
	for k, n := range b.size {
		total += n
		if k != keep {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return b.used[keys[i]].Before(b.used[keys[j]]) })
	var out []string
	for _, k := range keys {
		if total <= b.max {
			break
		}
		out = append(out, k)
		total -= b.size[k]
	}
	return out
}

// evict drops a repository if no one holds its lock; a busy one is left for a later pass.
func (c *Cache) evict(key string) {
	m, _ := c.locks.LoadOrStore(key, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	if !mu.TryLock() {
		return
	}
	defer mu.Unlock()
	c.repos.Delete(key)
	if c.dir != "" {
		_ = os.RemoveAll(filepath.Join(c.dir, filepath.FromSlash(key)+".git"))
	}
	c.budget.mu.Lock()
	delete(c.budget.size, key)
	delete(c.budget.used, key)
	c.budget.mu.Unlock()
}
