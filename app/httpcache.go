package app

import (
	"container/list"
	"sync"
)

// lruCache is a size-bounded httpcache.Cache: the least recently used
// responses are evicted once the stored bytes exceed the limit.
type lruCache struct {
	mu    sync.Mutex
	limit int
	size  int
	order *list.List
	items map[string]*list.Element
}

// lruEntry is one cached response.
type lruEntry struct {
	key   string
	value []byte
}

// newLRUCache returns a cache holding at most limit bytes of responses.
func newLRUCache(limit int) *lruCache {
	return &lruCache{limit: limit, order: list.New(), items: map[string]*list.Element{}}
}

// Get returns a cached response and marks it recently used.
func (c *lruCache) Get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruEntry).value, true
}

// Set stores a response; one larger than the limit is not stored.
func (c *lruCache) Set(key string, value []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(key)
	if len(value) > c.limit {
		return
	}
	c.items[key] = c.order.PushFront(&lruEntry{key: key, value: value})
	c.size += len(value)
	for c.size > c.limit {
		c.remove(c.order.Back().Value.(*lruEntry).key)
	}
}

// Delete removes a response.
func (c *lruCache) Delete(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(key)
}

// remove deletes key; the caller holds the lock.
func (c *lruCache) remove(key string) {
	el, ok := c.items[key]
	if !ok {
		return
	}
	c.order.Remove(el)
	delete(c.items, key)
	c.size -= len(el.Value.(*lruEntry).value)
}
