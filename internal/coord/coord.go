// Package coord coordinates replicas of the app for periodic work: the resync of an
// installation and the promotion waits run in one replica at a time, the one that holds their
// lease. Leases are named, expire on their own when their holder disappears, and are renewed by
// the holder while it works. Correctness never depends on them: every write the app makes is
// a leased ref update or is checked against GitHub's state first, so two replicas running the
// same work only cost GitHub's budget twice. Leases save that budget.
package coord

import (
	"context"
	"time"
)

// Leases grants named, expiring leases to holders, so that replicas do periodic work once.
type Leases interface {
	// TryAcquire takes, or renews when holder has it, the lease key until ttl from now; it
	// reports whether holder holds it afterwards.
	TryAcquire(ctx context.Context, key, holder string, ttl time.Duration) (bool, error)
	// Release gives the lease up if holder has it.
	Release(ctx context.Context, key, holder string) error
}
