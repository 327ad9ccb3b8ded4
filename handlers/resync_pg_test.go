package handlers

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/pgtest"
	"github.com/kalypso-gitops/kalypso/internal/store"
)

// Two replicas whose leases are one PostgreSQL store: each installation is resynced by one of
// them; the other takes it over when the first gives its leases up or when they expire.
func TestTwoReplicasResyncOnceThroughThePostgreSQLStore(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Start(t).NewDatabase(t)
	var ahead atomic.Int64 // how far the stores' clock, by which leases expire, is ahead
	now := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	replica := func(holder string) (*fake, *running, *store.Store) {
		s, err := store.Open(ctx, store.Options{Driver: store.Postgres, URL: url, Now: now})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		f := newFake()
		c := f.core()
		c.Installations = func(context.Context) ([]int64, error) { return []int64{42}, nil }
		c.Leases, c.Holder, c.ResyncTTL = s, holder, time.Hour
		return f, run(t, c, 1), s
	}
	fa, ra, sa := replica("replica-a")
	fb, rb, _ := replica("replica-b")
	resynced := func(f *fake, r *running) bool {
		t.Helper()
		require.NoError(t, r.do(r.c.Resync))
		return slices.Contains(f.lines(), "rebuild 42")
	}

	require.True(t, resynced(fa, ra), "replica A resyncs")
	require.False(t, resynced(fb, rb), "replica B leaves it to A")
	require.True(t, resynced(fa, ra), "A renews its lease at its next resync")
	require.False(t, resynced(fb, rb))

	require.NoError(t, sa.ReleaseAll(ctx, "replica-a"), "replica A stops")
	require.True(t, resynced(fb, rb), "replica B takes the resync over")
	require.False(t, resynced(fa, ra))

	ahead.Add(int64(2 * time.Hour)) // replica B is lost: its lease expires
	require.True(t, resynced(fa, ra), "replica A takes it over again")
	require.False(t, resynced(fb, rb))
}
