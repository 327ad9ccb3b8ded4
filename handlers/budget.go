package handlers

import (
	"sync"
	"time"
)

// Budget bounds the previews each pull request author gets per hour, per installation, so
// that anyone able to open a pull request costs the app a bounded share of its time. It
// counts in this replica only.
type Budget struct {
	mu      sync.Mutex
	perHour int
	now     func() time.Time
	used    map[budgetKey][]time.Time // the times of the previews of the last hour, oldest first
}

type budgetKey struct {
	inst   int64
	author string
}

// NewBudget allows perHour previews per author and hour (0: no bound); now is the clock
// (nil: time.Now).
func NewBudget(perHour int, now func() time.Time) *Budget {
	if now == nil {
		now = time.Now
	}
	return &Budget{perHour: perHour, now: now, used: map[budgetKey][]time.Time{}}
}

// Take counts one preview of author's and reports whether the budget allowed it; when it
// did not, it returns when the next one is allowed.
func (b *Budget) Take(inst int64, author string) (bool, time.Time) {
	if b == nil || b.perHour <= 0 {
		return true, time.Time{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	k := budgetKey{inst, author}
	recent := b.used[k][:0]
	for _, t := range b.used[k] {
		if now.Sub(t) < time.Hour {
			recent = append(recent, t)
		}
	}
	if len(recent) >= b.perHour {
		b.used[k] = recent
		return false, recent[0].Add(time.Hour)
	}
	b.used[k] = append(recent, now)
	b.sweep(now)
	return true, time.Time{}
}

// sweep forgets authors without a preview in the last hour; b.mu is held.
func (b *Budget) sweep(now time.Time) {
	for k, ts := range b.used {
		if len(ts) == 0 || now.Sub(ts[len(ts)-1]) >= time.Hour {
			delete(b.used, k)
		}
	}
}
