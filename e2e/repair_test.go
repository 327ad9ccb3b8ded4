package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

const checkRunsRoute = "/repos/{owner}/{repo}/check-runs"

// A push to main whose delivery was lost is validated and pinned by the resync.
func TestE2EResyncValidatesAndPinsALostPushToMain(t *testing.T) {
	w := promotionWorld(t)
	first := w.declareChain("    timeout: 1m\n", "    after: dev\n")
	w.sim.DropWebhooks(true)
	lost, err := w.sim.CommitFiles(sample.Owner, sample.ControlPlane, "main", map[string]*string{"templates/notes.yaml": str("# lost\n")}, "lost")
	require.NoError(t, err)
	w.sim.DropWebhooks(false)
	require.Equal(t, first, w.pinOf("dev"), "nobody heard of it")

	w.stop()
	w.start("KALYPSO_PROMOTION_POLL_INTERVAL=100ms") // its resync at start
	for _, env := range []string{"dev", "stage"} {
		run := w.check(sample.ControlPlane, lost, env)
		require.NotNil(t, run, "main's head gets its %s check run", env)
		require.Equal(t, "success", run.GetConclusion())
	}
	require.Equal(t, lost, w.pinOf("dev"), "and is pinned")
	require.Equal(t, "pending", w.mainStatus("dev", lost).GetState())
	require.Equal(t, "superseded by "+lost[:7], w.mainStatus("dev", first).GetDescription())
}

// One 502 on the POST of a check run: the work is tried again (after looking for the check
// run, so that none is doubled) and the commit gets exactly one.
func TestE2EACheckRunLostToA502IsPostedByTheRetry(t *testing.T) {
	w := newWorld(t)
	w.start()
	w.sim.InjectFault(githubsim.Fault{Method: "POST", PathPattern: checkRunsRoute, Status: 502})
	sha := w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Retried"))})
	require.Zero(t, w.sim.PendingFaults())
	runs := w.checks(sample.ControlPlane, sha, "dev")
	require.Len(t, runs, 1)
	require.Equal(t, "success", runs[0].GetConclusion())
	require.Contains(t, w.logs.String(), "work failed; retrying")
	require.NotContains(t, w.logs.String(), `"webhook processing failed"`)
}

// A push whose delivery was dropped gets its check run, and its change the pull request, from
// the resync: on the head of every branch an environment reads.
func TestE2EResyncReportsOnTheHeadsOfWatchedBranches(t *testing.T) {
	w := newWorld(t)
	w.start()
	w.sim.DropWebhooks(true)
	dev, err := w.sim.CommitFiles(sample.Owner, sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Dropped"))}, "dropped")
	require.NoError(t, err)
	workload, err := w.sim.CommitFiles(sample.Owner, sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(observability("./dropped"))}, "dropped")
	require.NoError(t, err)
	w.sim.DropWebhooks(false)
	w.stop()
	w.start()
	require.Equal(t, "success", w.check(sample.ControlPlane, dev, "dev").GetConclusion())
	require.Equal(t, "success", w.check(sample.WorkloadRepo, workload, "dev").GetConclusion())
	require.Equal(t, "success", w.check(sample.WorkloadRepo, workload, "stage").GetConclusion())
	requireTree(t, w.expected("dev"), w.tree("kalypso/dev"), "kalypso/dev")
}

// A replica killed (SIGKILL) while its reconcile waits on GitHub: the other replica is not
// affected, and the killed one's restart repairs what it left (pull request and check run).
func TestE2EAReplicaKilledMidReconcile(t *testing.T) {
	w := newWorld(t)
	c := newCluster(w, 2)
	c.startAll()
	c.routeTo(map[string]int{"killed change": 0})
	w.sim.InjectFault(githubsim.Fault{Git: true, PathPattern: "/" + sample.Owner + "/" + sample.GitOpsRepo + ".git/",
		Header: map[string]string{replicaHeader: "a"}, Delay: time.Hour})
	sha, err := w.sim.CommitFiles(sample.Owner, sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Killed"))}, "killed change")
	require.NoError(t, err)
	w.eventually(func() bool { return w.sim.HeldCalls() == 1 }, "replica a reads its inputs and waits on GitHub")
	c.kill(0) // its slowed call ends with its connection
	w.eventually(func() bool { return w.sim.HeldCalls() == 0 }, "the simulator lets go of the call")
	require.Nil(t, w.check(sample.ControlPlane, sha, "dev"), "nothing was reported")
	require.NotContains(t, w.tree("kalypso/dev")["large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: Killed")

	c.start(0) // its resync at start
	w.settle()
	require.Equal(t, "success", w.check(sample.ControlPlane, sha, "dev").GetConclusion())
	require.Contains(t, w.tree("kalypso/dev")["large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: Killed")
	requireTree(t, w.expected("dev"), w.tree("kalypso/dev"), "kalypso/dev")
	noRaces(t, w)
}

// One 502 on the POST of the approval check run: the Promote button is asked for again, for
// the newest commit deployed upstream.
func TestE2EAPromoteButtonLostToA502IsAskedForAgain(t *testing.T) {
	w := promotionWorld(t)
	main := w.declareChain("    timeout: 1m\n    compliance: {minClusters: 1}\n", "    after: dev\n    approval: manual\n")
	merge := w.mergeEnvPR("dev", main)
	w.sim.InjectFault(githubsim.Fault{Method: "POST", PathPattern: checkRunsRoute, Status: 502})
	require.NoError(t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "success", fluxCluster1, "reconciliation succeeded"))
	w.waitStatus("dev", main, "success", "deployed to 1 cluster")
	var run *github.CheckRun
	w.eventually(func() bool { run = w.approvalRun(main, "stage"); return run != nil }, "the Promote button is asked for again")
	require.Zero(t, w.sim.PendingFaults(), "the 502 was met")
	require.Equal(t, "action_required", run.GetConclusion())
	_, actions, err := w.sim.CheckRunDetails(run.GetID())
	require.NoError(t, err)
	require.Len(t, actions, 1)
	require.Equal(t, "Promote", actions[0].Label)
}

// A merge of the GitOps pull request while a reconcile is under way (its head already merged,
// GitHub answers "422 No commits between dev and kalypso/dev"): the reconcile reads the state
// again, and the commit's check run is green.
func TestE2EAMergeRacingAReconcileIsNoFailure(t *testing.T) {
	w := newWorld(t)
	w.start()
	sha := w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Merged"))})
	run := w.check(sample.ControlPlane, sha, "dev")
	require.Equal(t, "success", run.GetConclusion())
	number := w.appPR("dev").GetNumber()

	gate := make(chan struct{})
	w.sim.InjectFault(githubsim.Fault{Method: "GET", PathPattern: "/repos/{owner}/{repo}/pulls", Gate: gate})
	require.NoError(t, w.sim.RerequestCheckRun(run.GetID(), "alice")) // a reconcile of dev begins
	w.eventually(func() bool { return w.sim.HeldCalls() == 1 }, "the reconcile looks for its pull request")
	_, err := w.sim.MergePR(sample.Owner, sample.GitOpsRepo, number, "platform-lead")
	require.NoError(t, err)
	close(gate)
	w.settle()

	runs := w.checks(sample.ControlPlane, sha, "dev")
	require.Len(t, runs, 2, "the re-run has a check run of its own")
	for _, r := range runs {
		require.Equal(t, "success", r.GetConclusion(), r.GetOutput().GetTitle())
	}
	require.Empty(t, w.prsOf("kalypso/dev"), "nothing left to propose")
	require.NotContains(t, w.logs.String(), `"reconcile failed"`)
	require.True(t, strings.Contains(w.logs.String(), "No commits between") || strings.Contains(w.logs.String(), "lost a race"),
		"the race was met")
}
