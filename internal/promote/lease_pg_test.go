package promote

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghfake"
	"github.com/kalypso-gitops/kalypso/internal/pgtest"
	"github.com/kalypso-gitops/kalypso/internal/store"
)

// Two replicas whose promoters share one PostgreSQL store as their leases: the wait runs in
// one of them at a time, once; the other takes it over when the first gives its leases up
// (a replica stopping) or when its lease expires (a replica lost), and continues the same
// GitHub Deployment.
func TestTwoReplicasRunAWaitOnceThroughThePostgreSQLStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.Start(t).NewDatabase(t)
	w := newWorld(t, "    compliance: {minClusters: 1}\n", stageManual)
	now := func() time.Time { return time.Unix(w.clock.Load(), 0) } // the stores' leases expire by it too
	open := func() *store.Store {
		s, err := store.Open(ctx, store.Options{Driver: store.Postgres, URL: url, Now: now})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	sa, sb := open(), open()
	w.start(w.cache, WithLeases(sa, "replica-a"))
	a := w.p
	b := New(w.cache, ghfake.Installations{GitHub: w.gh}, WithPollInterval(time.Millisecond),
		WithClock(now), WithScheduler(&recorder{}), WithLeases(sb, "replica-b"))
	dev := []envref.Env{info("dev").Env}
	m1 := w.pinnedToDev("a")
	merge := w.merge("dev", m1)

	converge := func(p *Promoter) time.Duration {
		t.Helper()
		again, err := p.Converge(ctx, info("dev"))
		require.NoError(t, err)
		return again
	}
	require.Equal(t, time.Millisecond, converge(a), "replica A starts the wait")
	require.Equal(t, dev, a.Waiting(1))
	w.gh.Reset()
	for range 3 {
		require.Equal(t, time.Millisecond, converge(b), "replica B looks again later")
	}
	require.Empty(t, w.gh.Calls(), "replica B reads nothing from GitHub while A holds the lease")
	require.Empty(t, b.Waiting(1))

	require.NoError(t, sa.ReleaseAll(ctx, "replica-a"), "replica A stops")
	require.Equal(t, time.Millisecond, converge(b), "replica B takes the wait over")
	require.Equal(t, dev, b.Waiting(1))
	w.gh.Reset()
	require.Equal(t, time.Millisecond, converge(a))
	require.Empty(t, w.gh.Calls(), "replica A, back, leaves the wait to B")

	w.advance(2 * time.Minute) // replica B is lost: its lease expires
	require.Equal(t, time.Millisecond, converge(a), "replica A takes the wait over again")
	w.gh.Reset()
	require.Equal(t, time.Millisecond, converge(b))
	require.Empty(t, w.gh.Calls())

	w.gh.SetStatus(gitopsRepo, merge, cluster1, "success")
	require.Zero(t, converge(a), "the holder decides")
	state, desc := w.status("dev", m1)
	require.Equal(t, "success", state)
	require.Equal(t, "deployed to 1 cluster", desc)
	deps := w.gh.DeploymentList[cp]
	require.Len(t, deps, 1, "one Deployment across replicas")
	var states []string
	for _, st := range w.gh.DeploymentHistory[deps[0].GetID()] {
		states = append(states, st.GetState())
	}
	require.Equal(t, []string{"in_progress", "success"}, states, "decided once")
	ok, err := sb.TryAcquire(ctx, LeaseKey(info("dev").Env), "replica-b", time.Minute)
	require.NoError(t, err)
	require.True(t, ok, "the lease is released when the wait ends")
}
