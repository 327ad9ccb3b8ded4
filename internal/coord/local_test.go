package coord

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLocalLeases(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	l := NewLocal(WithClock(func() time.Time { return now }))

	ok, err := l.TryAcquire(ctx, "resync/1", "a", time.Minute)
	require.NoError(t, err)
	require.True(t, ok, "a free lease is granted")
	ok, _ = l.TryAcquire(ctx, "resync/1", "b", time.Minute)
	require.False(t, ok, "a held lease is refused to another holder")
	ok, _ = l.TryAcquire(ctx, "resync/2", "b", time.Minute)
	require.True(t, ok, "leases are per key")

	now = now.Add(50 * time.Second)
	ok, _ = l.TryAcquire(ctx, "resync/1", "a", time.Minute)
	require.True(t, ok, "the holder renews")
	now = now.Add(59 * time.Second)
	ok, _ = l.TryAcquire(ctx, "resync/1", "b", time.Minute)
	require.False(t, ok, "the renewal counts from its own time")
	now = now.Add(time.Second)
	ok, _ = l.TryAcquire(ctx, "resync/1", "b", time.Minute)
	require.True(t, ok, "an expired lease goes to whoever asks")

	require.NoError(t, l.Release(ctx, "resync/1", "a"))
	ok, _ = l.TryAcquire(ctx, "resync/1", "a", time.Minute)
	require.False(t, ok, "only the holder releases")
	require.NoError(t, l.Release(ctx, "resync/1", "b"))
	ok, _ = l.TryAcquire(ctx, "resync/1", "a", time.Minute)
	require.True(t, ok, "a released lease is free")
}
