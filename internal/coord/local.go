package coord

import (
	"context"
	"sync"
	"time"
)

// Local is Leases within one process: a lease is granted when nobody holds it or its holder's
// time ran out. One replica is one holder, so a single replica always gets its leases; several
// replicas, each with its own Local, do not see each other's leases (the shared store does).
type Local struct {
	mu     sync.Mutex
	now    func() time.Time
	leases map[string]lease
}

// lease is who holds a key and until when.
type lease struct {
	holder string
	until  time.Time
}

var _ Leases = (*Local)(nil)

// LocalOption configures a Local.
type LocalOption func(*Local)

// WithClock sets the clock Local reads (default time.Now).
func WithClock(now func() time.Time) LocalOption { return func(l *Local) { l.now = now } }

// NewLocal returns in-process leases.
func NewLocal(opts ...LocalOption) *Local {
	l := &Local{now: time.Now, leases: map[string]lease{}}
	for _, o := range opts {
		o(l)
	}
	return l
}

// TryAcquire implements Leases.
func (l *Local) TryAcquire(_ context.Context, key, holder string, ttl time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if cur, ok := l.leases[key]; ok && cur.holder != holder && now.Before(cur.until) {
		return false, nil
	}
	l.leases[key] = lease{holder: holder, until: now.Add(ttl)}
	l.sweep(now)
	return true, nil
}

// Release implements Leases.
func (l *Local) Release(_ context.Context, key, holder string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.leases[key]; ok && cur.holder == holder {
		delete(l.leases, key)
	}
	return nil
}

// sweep drops expired leases, so that the map holds only what is held.
func (l *Local) sweep(now time.Time) {
	for k, v := range l.leases {
		if !now.Before(v.until) {
			delete(l.leases, k)
		}
	}
}
