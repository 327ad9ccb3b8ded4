package app

import (
	"container/list"
	"sync"
)

// recentDeliveries is how many webhook delivery IDs the app remembers to drop redeliveries.
const recentDeliveries = 4096

// deliveryLRU remembers the IDs of the most recent webhook deliveries, so that a delivery sent
// again with the same X-GitHub-Delivery (a redelivery, or a replay of its signed bytes) is
// processed once. It is a cache only: another replica, or this one after a restart, processes
// a redelivery again, and every handler stays correct when it does. The zero value is ready
// to use and holds at most recentDeliveries IDs.
type deliveryLRU struct {
	mu    sync.Mutex
	max   int // 0 means recentDeliveries
	order *list.List
	ids   map[string]*list.Element
}

// firstTime records id and reports whether it was not seen recently. An empty id (no
// X-GitHub-Delivery header) is never remembered: it is always a first time.
func (l *deliveryLRU) firstTime(id string) bool {
	if id == "" {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ids == nil {
		l.ids, l.order = map[string]*list.Element{}, list.New()
	}
	if e, ok := l.ids[id]; ok {
		l.order.MoveToFront(e)
		return false
	}
	l.ids[id] = l.order.PushFront(id)
	limit := l.max
	if limit <= 0 {
		limit = recentDeliveries
	}
	for l.order.Len() > limit {
		oldest := l.order.Back()
		l.order.Remove(oldest)
		delete(l.ids, oldest.Value.(string))
	}
	return true
}

// forget drops id, so that a redelivery of an event whose processing failed is processed again.
func (l *deliveryLRU) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.ids[id]; ok {
		l.order.Remove(e)
		delete(l.ids, id)
	}
}
