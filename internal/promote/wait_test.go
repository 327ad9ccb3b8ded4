package promote

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/coord"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

func TestJudge(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	stage := &scheduling.Stage{Timeout: 10 * time.Minute, MinClusters: 2}
	cases := map[string]struct {
		expected []string
		min      int
		elapsed  time.Duration
		ok       []string
		failed   string
		observed bool
		want     verdict
	}{
		"nothing yet":                 {nil, 2, 0, nil, "", true, verdict{desc: "0/2 clusters compliant"}},
		"some":                        {nil, 2, time.Minute, []string{"a"}, "", true, verdict{desc: "1/2 clusters compliant"}},
		"the minimum":                 {nil, 2, time.Minute, []string{"a", "b"}, "", true, verdict{final: true, success: true, desc: "deployed to 2 clusters"}},
		"more expected than minimum":  {[]string{"a", "b", "c"}, 2, time.Minute, []string{"a", "b"}, "", true, verdict{desc: "2/3 clusters compliant"}},
		"every expected cluster":      {[]string{"a", "b", "c"}, 2, time.Minute, []string{"a", "b", "c"}, "", true, verdict{final: true, success: true, desc: "deployed to 3 clusters"}},
		"enough, but not the same":    {[]string{"a", "b"}, 0, time.Minute, []string{"a", "c"}, "", true, verdict{desc: "2/2 clusters compliant"}},
		"a failure ends it":           {nil, 2, time.Minute, []string{"a", "b"}, "c", true, verdict{final: true, desc: "cluster c failed"}},
		"unreadable never counts":     {nil, 1, time.Minute, []string{"a"}, "", false, verdict{desc: "1/1 clusters compliant"}},
		"no minimum, nothing to wait": {nil, 0, 0, nil, "", true, verdict{final: true, success: true, desc: "deployed to 0 clusters"}},
		"timed out":                   {[]string{"a", "b"}, 0, 10 * time.Minute, []string{"a"}, "", true, verdict{final: true, desc: "timed out after 10m0s: 1/2 clusters compliant (missing b)"}},
		"just before the timeout":     {nil, 2, 10*time.Minute - time.Second, []string{"a"}, "", true, verdict{desc: "1/2 clusters compliant"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := *stage
			s.MinClusters = tc.min
			d := &deployment{Stage: &s, Started: start, expected: tc.expected}
			require.Equal(t, tc.want, judge(d, start.Add(tc.elapsed), tc.ok, tc.failed, tc.observed))
		})
	}
}

func TestMergeStartsTheWaitAndSuccessPromotesFurther(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "    compliance: {minClusters: 2}\n", stageAuto)
	ctx := context.Background()
	m1 := w.main("a")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m1)))
	merge := w.merge("dev", m1)
	w.gh.SetStatus(gitopsRepo, merge, cluster1, "success")
	later := w.merge("dev", m1) // a later GitOps commit: its reports count too
	w.gh.SetStatus(gitopsRepo, later, cluster2, "success")
	w.gh.SetStatus(gitopsRepo, later, "other/check", "failure")
	w.settle("dev")

	state, desc := w.status("dev", m1)
	require.Equal(t, "success", state)
	require.Equal(t, "deployed to 2 clusters", desc)
	deps := w.gh.DeploymentList[cp]
	require.Len(t, deps, 1)
	require.Equal(t, m1, deps[0].GetSHA())
	require.JSONEq(t, `{"gitops_repo":"microsoft/kalypso-gitops","gitops_commit":"`+merge+`"}`, string(deps[0].Payload))
	var states []string
	for _, st := range w.gh.DeploymentHistory[deps[0].GetID()] {
		states = append(states, st.GetState())
	}
	require.Equal(t, []string{"in_progress", "success"}, states)
	require.Equal(t, m1, w.pin("stage"), "stage is automatic")
	state, _ = w.status("stage", m1)
	require.Equal(t, "pending", state)
}

func TestWaitEnds(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		report  func(w *world, merge string)
		elapsed time.Duration
		state   string
		desc    string
		stage   string // what stage then pins: the commit, or the seed
	}{
		"a cluster fails": {func(w *world, merge string) { w.gh.SetStatus(gitopsRepo, merge, cluster1, "failure") }, 0, "failure", "cluster " + cluster1 + " failed", "seed"},
		"time runs out":   {func(*world, string) {}, time.Minute, "failure", "timed out after 1m0s: 0/1 clusters compliant", "seed"},
		"asks approval":   {func(w *world, merge string) { w.gh.SetStatus(gitopsRepo, merge, cluster1, "success") }, 0, "success", "deployed to 1 cluster", "seed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "    timeout: 1m\n    compliance: {minClusters: 1}\n", stageManual)
			ctx := context.Background()
			m1 := w.main("a")
			require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m1)))
			merge := w.merge("dev", m1)
			tc.report(w, merge)
			w.settle("dev") // the wait starts and, with no end in sight, polls until settle gives up
			w.advance(tc.elapsed)
			w.settle("dev")
			state, desc := w.status("dev", m1)
			require.Equal(t, tc.state, state)
			require.Equal(t, tc.desc, desc)
			require.Equal(t, w.seed, w.pin("stage"))
			require.Equal(t, tc.state == "success", w.gh.Count("CreateCheckRun") == 1, "approval asked only on success")
		})
	}
}

// Before the GitOps pull request is merged there is nothing to wait for: the step looks and
// asks to look again only when something happens.
func TestNothingToWaitForBeforeTheMerge(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageAuto)
	ctx := context.Background()
	m1 := w.pinnedToDev("a")
	w.gh.Reset()
	again, err := w.p.Converge(ctx, info("dev"))
	require.NoError(t, err)
	require.Zero(t, again)
	require.Equal(t, []string{"Statuses"}, w.gh.Methods())
	require.Empty(t, w.gh.DeploymentList)
	require.Empty(t, w.p.Waiting(1))
	state, desc := w.status("dev", m1)
	require.Equal(t, "pending", state)
	require.Equal(t, descAwaitMerge, desc)
}

// Two replicas with a shared lease store: only the holder of the promotion's lease runs it;
// the other looks again later.
func TestAPromotionRunsWhereItsLeaseIsHeld(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "    compliance: {minClusters: 1}\n", stageAuto)
	ctx := context.Background()
	leases := coord.NewLocal()
	ok, err := leases.TryAcquire(ctx, LeaseKey(info("dev").Env), "other-replica", time.Hour)
	require.NoError(t, err)
	require.True(t, ok)
	w.start(w.cache, WithLeases(leases, "this-replica"))
	m1 := w.pinnedToDev("a")
	w.merge("dev", m1)
	w.gh.Reset()
	again, err := w.p.Converge(ctx, info("dev"))
	require.NoError(t, err)
	require.Equal(t, time.Millisecond, again, "it looks again after a poll interval")
	require.Empty(t, w.gh.Calls(), "nothing is read from GitHub without the lease")
	require.NoError(t, leases.Release(ctx, LeaseKey(info("dev").Env), "other-replica"))
	again, err = w.p.Converge(ctx, info("dev"))
	require.NoError(t, err)
	require.Equal(t, time.Millisecond, again, "the wait polls")
	require.Len(t, w.gh.DeploymentList[cp], 1)
	require.Equal(t, []envref.Env{info("dev").Env}, w.p.Waiting(1))
}

func TestAStatusWakesTheWaitAndANewerCommitReplacesIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "    compliance: {minClusters: 1}\n", stageManual)
	w.start(w.cache, WithPollInterval(time.Hour)) // only a wake makes it look again
	ctx := context.Background()
	m1 := w.pinnedToDev("a")
	w.merge("dev", m1)
	for range 2 {
		again, err := w.p.Converge(ctx, info("dev"))
		require.NoError(t, err)
		require.Equal(t, time.Hour, again)
	}
	require.Len(t, w.gh.DeploymentList[cp], 1, "the same wait is not started twice")
	_, desc := w.status("dev", m1)
	require.Equal(t, "0/1 clusters compliant", desc)
	require.Equal(t, []envref.Env{info("dev").Env}, w.p.Waiting(1), "a status webhook makes it look again")

	m2 := w.pinnedToDev("b") // supersedes m1: its wait ends
	state, _ := w.status("dev", m1)
	require.Equal(t, "error", state)
	merge2 := w.merge("dev", m2)
	w.settle("dev")
	_, desc = w.status("dev", m2)
	require.Equal(t, "0/1 clusters compliant", desc)
	w.gh.SetStatus(gitopsRepo, merge2, cluster1, "success")
	w.settle("dev")
	state, desc = w.status("dev", m2)
	require.Equal(t, "success", state)
	require.Equal(t, "deployed to 1 cluster", desc)
}
