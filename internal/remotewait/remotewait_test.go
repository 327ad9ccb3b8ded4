package remotewait

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSinceAddsToTheClockOfTheContextOnly(t *testing.T) {
	ctx, clock := With(context.Background())
	start := time.Now().Add(-3 * time.Millisecond)
	Since(ctx, start)
	Since(ctx, start)
	require.GreaterOrEqual(t, clock.Waited(), 6*time.Millisecond)
	Since(context.Background(), start) // no clock: nothing to add to, no panic
	outer := clock.Waited()
	other, inner := With(ctx)
	Since(other, time.Now().Add(-time.Millisecond))
	require.GreaterOrEqual(t, inner.Waited(), time.Millisecond)
	require.Equal(t, outer, clock.Waited(), "a nested clock counts for itself only")
}
