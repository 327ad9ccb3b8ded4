// Package remotewait measures how long a piece of work waits for GitHub — REST calls, git
// fetches, listings and pushes — so that the app's own time can be told apart from GitHub's.
// A Clock travels in a context; whoever calls GitHub with that context adds the time it waited.
package remotewait

import (
	"context"
	"sync/atomic"
	"time"
)

// Clock adds up the time spent waiting for GitHub. It is safe for concurrent use.
type Clock struct{ waited atomic.Int64 }

type clockKey struct{}

// With returns a context carrying a new clock, and the clock.
func With(ctx context.Context) (context.Context, *Clock) {
	c := &Clock{}
	return context.WithValue(ctx, clockKey{}, c), c
}

// Since adds the time since start to the clock of ctx, if it has one.
func Since(ctx context.Context, start time.Time) {
	if c, ok := ctx.Value(clockKey{}).(*Clock); ok {
		c.waited.Add(int64(time.Since(start)))
	}
}

// Waited is the time added to the clock so far.
func (c *Clock) Waited() time.Duration { return time.Duration(c.waited.Load()) }
