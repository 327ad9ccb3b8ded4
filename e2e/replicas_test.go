package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// Two pushes to main handled by two replicas, the older one slower (its first check-run
// report held until the newer one is done): dev ends pinning the newer commit, nothing says
// it was superseded by its own ancestor, and the older push changes nothing but its check run.
func TestE2EReplicasPinOnlyMovesForward(t *testing.T) {
	w := newWorld(t)
	c := newCluster(w, 2, "KALYPSO_PROMOTION_POLL_INTERVAL=100ms")
	c.startAll()
	first := w.declareChain("    timeout: 1m\n", "    after: dev\n")
	require.Equal(t, first, w.pinOf("dev"))

	c.routeTo(map[string]int{"older main change": 0, "newer main change": 1})
	gate := make(chan struct{})
	w.sim.InjectFault(githubsim.Fault{Method: "POST", PathPattern: "/repos/{owner}/{repo}/check-runs",
		Header: map[string]string{replicaHeader: "a"}, Gate: gate})
	older, err := w.sim.CommitFiles(sample.Owner, sample.ControlPlane, "main", map[string]*string{"templates/notes.yaml": str("# one\n")}, "older main change")
	require.NoError(t, err)
	w.eventually(func() bool { return w.sim.HeldCalls() == 1 }, "replica a validated the older commit and is slowed")
	newer, err := w.sim.CommitFiles(sample.Owner, sample.ControlPlane, "main", map[string]*string{"templates/notes.yaml": str("# two\n")}, "newer main change")
	require.NoError(t, err)
	c.waitProcessed(newer)
	require.Equal(t, newer, w.pinOf("dev"), "replica b pinned the newer commit")
	close(gate)
	w.settle()

	require.Equal(t, newer, w.pinOf("dev"), "the pin never moved back")
	st := w.mainStatus("dev", newer)
	require.Equal(t, "pending", st.GetState())
	require.Equal(t, "waiting for the GitOps pull request to be merged", st.GetDescription())
	require.Nil(t, w.mainStatus("dev", older), "the older commit was never pinned")
	require.Equal(t, "superseded by "+newer[:7], w.mainStatus("dev", first).GetDescription())
	require.Contains(t, w.logs.String(), "main is not ahead of the pinned commit")
	for _, sha := range []string{older, newer} {
		run := w.check(sample.ControlPlane, sha, "dev")
		require.NotNil(t, run, "main %s has its check run", sha[:7])
		require.Equal(t, "success", run.GetConclusion())
	}
	w.eventually(func() bool {
		return w.tree("kalypso/dev")[".github/tracking/Promoted_Commit_Id"] == newer
	}, "the pull request proposes the newer commit")
	noRaces(t, w)
}

// Two workload pushes handled by two replicas, the older one's GitOps fetch slower (held until
// the newer one is proposed): the pull request never goes back to the older revision.
func TestE2EReplicasNeverReplaceNewerInputsWithOlder(t *testing.T) {
	w := newWorld(t)
	c := newCluster(w, 2)
	c.start(0, "KALYPSO_WORKERS=1") // one worker: dev's reconcile (sorted first) is the one slowed
	c.start(1)
	c.routeTo(map[string]int{"workload p-1": 0, "workload p-2": 1})
	gate := make(chan struct{})
	w.sim.InjectFault(githubsim.Fault{Git: true, PathPattern: "/" + sample.Owner + "/" + sample.GitOpsRepo + ".git/",
		Header: map[string]string{replicaHeader: "a"}, Gate: gate})
	workload := func(path, msg string) string {
		sha, err := w.sim.CommitFiles(sample.Owner, sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(observability(path))}, msg)
		require.NoError(t, err)
		return sha
	}
	older := workload("./p-1", "workload p-1")
	w.eventually(func() bool { return w.sim.HeldCalls() == 1 }, "replica a read p-1 and is slowed before writing")
	newer := workload("./p-2", "workload p-2")
	c.waitProcessed(newer)
	proposed := w.head("kalypso/dev")
	require.Contains(t, w.headMessage(sample.GitOpsRepo, "kalypso/dev"), newer, "replica b proposed p-2")
	close(gate)
	w.settle()

	require.Equal(t, proposed, w.head("kalypso/dev"), "the proposal built from p-2 stays")
	require.Contains(t, w.headMessage(sample.GitOpsRepo, "kalypso/dev"), "Kalypso-Source: workload platform-svc "+newer)
	require.Contains(t, w.tree("kalypso/dev")["large/observability-prometheus/reconciler.yaml"], "./p-2")
	requireTree(t, w.expected("dev"), w.tree("kalypso/dev"), "kalypso/dev")
	require.Equal(t, proposed, w.appPR("dev").GetHead().GetSHA())
	require.Contains(t, w.logs.String(), "lost a race with another writer; reading the state again")
	runs := w.checks(sample.WorkloadRepo, newer, "dev")
	require.Len(t, runs, 1, "the newest head has one check run, whichever replica reported")
	require.Equal(t, "success", runs[0].GetConclusion())
	require.Empty(t, w.checks(sample.WorkloadRepo, older, "dev"), "a head superseded before it was read gets none")
	noRaces(t, w)
}

// Pushes of every kind while both replicas resync every few hundred milliseconds: no crash, no
// data race (run with KALYPSO_E2E_RACE=1, as `make race` does) and the end state is the last push's.
func TestE2EReplicasChurnWithResync(t *testing.T) {
	w := newWorld(t)
	c := newCluster(w, 2, "KALYPSO_RESYNC_INTERVAL=300ms")
	c.startAll()
	w.sim.SetWebhookMode(githubsim.WebhooksAsync)
	const n = 18
	for i := range n {
		repo, branch, files := sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig(fmt.Sprintf("Churn-%02d", i)))}
		switch i % 3 {
		case 1:
			repo, branch, files = sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(observability(fmt.Sprintf("./churn-%02d", i)))}
		case 2:
			branch, files = "main", map[string]*string{"templates/notes.yaml": str(fmt.Sprintf("# %d\n", i))}
		}
		_, err := w.sim.CommitFiles(sample.Owner, repo, branch, files, fmt.Sprintf("churn %d", i))
		require.NoError(t, err)
	}
	w.settle()
	w.eventually(func() bool {
		got := w.tree("kalypso/dev")
		return strings.Contains(got["large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: Churn-15\n") &&
			strings.Contains(got["large/observability-prometheus/reconciler.yaml"], "./churn-16")
	}, "kalypso/dev holds the last push of each source")
	requireTree(t, w.expected("dev"), w.tree("kalypso/dev"), "kalypso/dev after the churn")
	require.Len(t, w.prsOf("kalypso/dev"), 1)
	noRaces(t, w)
}
