package promote

import (
	"context"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/gitfake"
	"github.com/kalypso-gitops/kalypso/internal/store"
)

// deployed records a successful Deployment of a main commit to env, as a finished wait does.
func (w *world) deployed(env, sha string) {
	w.t.Helper()
	ctx := context.Background()
	dep, err := w.gh.CreateDeployment(ctx, cp, &github.DeploymentRequest{Ref: github.String(sha), Environment: github.String(env)})
	require.NoError(w.t, err)
	require.NoError(w.t, w.gh.CreateDeploymentStatus(ctx, cp, dep.GetID(), &github.DeploymentStatusRequest{State: github.String("success")}))
	require.NoError(w.t, w.p.status(ctx, w.loc(env, sha), "success", "deployed to 1 cluster"))
}

// withHolds restarts the promoter with holds kept in a store in memory, and returns the store.
func (w *world) withHolds(opts ...Option) *store.Store {
	w.t.Helper()
	st, err := store.Open(context.Background(), store.Options{})
	require.NoError(w.t, err)
	w.t.Cleanup(func() { st.Close() })
	w.start(w.cache, append([]Option{WithHolds(st)}, opts...)...)
	return st
}

func TestRollBackPinsThePreviousDeploymentAndHolds(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageAuto)
	trail := &memTrail{}
	st := w.withHolds(WithAudit(trail))
	ctx := context.Background()
	m1 := w.main("a")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m1)))
	w.deployed("dev", m1)
	m2 := w.main("b")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m2)))
	failed, err := w.gh.CreateDeployment(ctx, cp, &github.DeploymentRequest{Ref: github.String(m2), Environment: github.String("dev")})
	require.NoError(t, err)
	require.NoError(t, w.gh.CreateDeploymentStatus(ctx, cp, failed.GetID(), &github.DeploymentStatusRequest{State: github.String("failure")}))
	require.Equal(t, m2, w.pin("dev"))

	rb, err := w.p.RollBack(ctx, info("dev").Env, "alice", "m2 breaks checkout")
	require.NoError(t, err)
	require.Equal(t, Rollback{From: m2, To: m1}, rb)
	require.Equal(t, m1, w.pin("dev"), "the one pin that moves backwards")
	require.Contains(t, w.remotes.Message(cp, w.remotes.Head(cp, "dev")), "Kalypso-Reason: rollback by @alice from "+m2[:7]+": m2 breaks checkout\n")
	state, desc := w.status("dev", m1)
	require.Equal(t, "pending", state, "through the usual pull request and wait")
	require.Equal(t, descAwaitMerge, desc)
	h, held, err := st.HoldOf(ctx, cp.String(), "dev")
	require.NoError(t, err)
	require.True(t, held)
	require.Equal(t, "alice", h.By)

	m3 := w.main("c")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m3)))
	require.Equal(t, m1, w.pin("dev"), "no automatic promotion into a held environment")
	state, _ = w.status("dev", m3)
	require.Equal(t, "pending", state)
	w.deployed("dev", m1)
	w.settle("stage")
	require.Equal(t, w.seed, w.pin("stage"), "nor out of it")

	_, err = w.p.Release(ctx, info("dev").Env, "bob", "checkout fixed in m3")
	require.NoError(t, err)
	w.settle("dev", "stage")
	require.Equal(t, m3, w.pin("dev"), "the release promotes main's head")
	require.Equal(t, w.seed, w.pin("stage"), "dev's new pin is not deployed yet")
	_, err = w.p.Release(ctx, info("dev").Env, "bob", "again")
	require.ErrorIs(t, err, ErrNotHeld)

	require.Contains(t, trail.lines(), "hold alice dev "+m1[:7]+" rollback: m2 breaks checkout")
	require.Contains(t, trail.lines(), "rollback alice dev "+m1[:7]+" m2 breaks checkout")
	require.Contains(t, trail.lines(), "release bob dev  checkout fixed in m3")
}

func TestRollBackNeedsAnEarlierSuccess(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageAuto)
	st := w.withHolds()
	m1 := w.main("a")
	require.NoError(t, w.p.PromoteMain(context.Background(), w.loc("", m1)))
	w.deployed("dev", m1)
	_, err := w.p.RollBack(context.Background(), info("dev").Env, "alice", "why")
	require.ErrorIs(t, err, ErrNothingToRollBack)
	_, held, err := st.HoldOf(context.Background(), cp.String(), "dev")
	require.NoError(t, err)
	require.False(t, held, "nothing rolled back, nothing held")
}

func TestRollBackConfigRevertsTheLatestConfigChange(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageAuto)
	st := w.withHolds()
	ctx := context.Background()
	before := w.remotes.File(cp, "dev", "base-repo.yaml")
	change := w.remotes.Commit(cp, "dev", map[string]*string{"configs/extra.yaml": gitfake.Str("replicas: 9\n")}, "Scale up")

	rb, err := w.p.RollBackConfig(ctx, info("dev").Env, "alice", "too many replicas")
	require.NoError(t, err)
	require.Equal(t, change, rb.From)
	head := w.remotes.Head(cp, "dev")
	require.Equal(t, head, rb.To)
	require.Empty(t, w.remotes.File(cp, "dev", "configs/extra.yaml"), "the change is reverted")
	require.Equal(t, before, w.remotes.File(cp, "dev", "base-repo.yaml"))
	require.Contains(t, w.remotes.Message(cp, head), "Revert \"Scale up\"\n\nThis reverts commit "+change+".\n\nKalypso-Reason: rollback by @alice: too many replicas\n")
	require.Contains(t, w.sched.pinned, "dev:dev", "the environment reconciles its branch")
	_, held, err := st.HoldOf(ctx, cp.String(), "dev")
	require.NoError(t, err)
	require.True(t, held)

	_, err = w.p.Release(ctx, info("dev").Env, "alice", "done")
	require.NoError(t, err)
	m := w.main("a")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m)))
	require.Equal(t, m, w.pin("dev"))
	_, err = w.p.RollBackConfig(ctx, info("dev").Env, "alice", "again")
	require.ErrorIs(t, err, ErrNotConfigChange, "a pin is rolled back as a deployment")
}
