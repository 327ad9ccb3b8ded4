package e2e

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

const (
	devTwoClusters = "    timeout: 1m\n    compliance: {minClusters: 2}\n"
	fluxCluster2   = "kustomization/flux-system/77aa01bc"
)

// proposed waits until the app's pull request of env proposes main commit sha.
func (w *world) proposed(env, sha string) *github.PullRequest {
	w.t.Helper()
	w.eventually(func() bool {
		return w.appPR(env) != nil && w.tree("kalypso/" + env)[".github/tracking/Promoted_Commit_Id"] == sha
	}, "the "+env+" pull request proposes "+sha[:7])
	return w.appPR(env)
}

// bothClustersReport posts success from two clusters on a GitOps commit.
func (w *world) bothClustersReport(commit string) {
	w.t.Helper()
	for _, cluster := range []string{fluxCluster1, fluxCluster2} {
		require.NoError(w.t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, commit, "success", cluster, "reconciliation succeeded"))
	}
}

// deploymentOf returns the Deployment of a main commit to env and its statuses, newest first.
func (w *world) deploymentOf(env, sha string) (*github.Deployment, []*github.DeploymentStatus) {
	w.t.Helper()
	var dep *github.Deployment
	for _, d := range w.sim.Deployments(sample.Owner, sample.ControlPlane) {
		if d.GetEnvironment() == env && d.GetSHA() == sha {
			require.Nil(w.t, dep, "one deployment of %s to %s", sha[:7], env)
			dep = d
		}
	}
	require.NotNil(w.t, dep, "a deployment of %s to %s", sha[:7], env)
	token, err := w.sim.InstallationToken(w.seeded.Installation)
	require.NoError(w.t, err)
	gh, err := github.NewClient(nil).WithAuthToken(token).WithEnterpriseURLs(w.sim.APIURL(), w.sim.UploadURL())
	require.NoError(w.t, err)
	statuses, _, err := gh.Repositories.ListDeploymentStatuses(context.Background(), sample.Owner, sample.ControlPlane, dep.GetID(), nil)
	require.NoError(w.t, err)
	return dep, statuses
}

// gitopsCommit reads the GitOps commit a Deployment records as merged.
func gitopsCommit(t *testing.T, dep *github.Deployment) string {
	var pl struct {
		GitOpsCommit string `json:"gitops_commit"`
	}
	require.NoError(t, json.Unmarshal(dep.Payload, &pl))
	return pl.GitOpsCommit
}

// The GitOps pull request is merged while the app is stopped: when it starts, it finds the
// merge on the GitOps branch and the promotion completes.
func TestE2EPromotionMergedWhileStopped(t *testing.T) {
	w := promotionWorld(t)
	main := w.declareChain(devTwoClusters, "    after: dev\n")
	w.waitStatus("dev", main, "pending", "waiting for the GitOps pull request to be merged")
	pr := w.proposed("dev", main)
	w.stop()
	merge, err := w.sim.MergePR(sample.Owner, sample.GitOpsRepo, pr.GetNumber(), "platform-lead")
	require.NoError(t, err)
	w.bothClustersReport(merge)

	w.start("KALYPSO_PROMOTION_POLL_INTERVAL=100ms")
	w.waitStatus("dev", main, "success", "deployed to 2 clusters")
	w.waitStatus("stage", main, "pending", "waiting for the GitOps pull request to be merged")
	dep, statuses := w.deploymentOf("dev", main)
	require.Equal(t, merge, gitopsCommit(t, dep), "the deployment records the merge commit")
	require.Equal(t, "success", statuses[0].GetState())
}

// The merge webhook is lost: the next resync finds the merge and the promotion completes.
func TestE2EPromotionMergeWebhookLostThenResync(t *testing.T) {
	w := newWorld(t)
	w.start("KALYPSO_PROMOTION_POLL_INTERVAL=100ms", "KALYPSO_RESYNC_INTERVAL=1s")
	main := w.declareChain(devTwoClusters, "    after: dev\n")
	pr := w.proposed("dev", main)
	w.sim.DropWebhooks(true)
	merge, err := w.sim.MergePR(sample.Owner, sample.GitOpsRepo, pr.GetNumber(), "platform-lead")
	require.NoError(t, err)
	w.sim.DropWebhooks(false)
	dropped := false
	for _, d := range w.sim.Deliveries() {
		dropped = dropped || d.Event == "pull_request" && d.State == githubsim.DeliveryDropped
	}
	require.True(t, dropped, "the app does not hear of the merge")
	w.bothClustersReport(merge)

	w.waitStatus("dev", main, "success", "deployed to 2 clusters")
	w.waitStatus("stage", main, "pending", "waiting for the GitOps pull request to be merged")
	dep, _ := w.deploymentOf("dev", main)
	require.Equal(t, merge, gitopsCommit(t, dep))
}

// A commit superseded while its clusters are being waited for gets a final Deployment status.
func TestE2EPromotionSupersededDeploymentEnds(t *testing.T) {
	w := promotionWorld(t)
	first := w.declareChain(devOneCluster, "    after: dev\n")
	w.mergeEnvPR("dev", first)
	w.waitStatus("dev", first, "pending", "0/1 clusters compliant")
	_, statuses := w.deploymentOf("dev", first)
	require.Equal(t, "in_progress", statuses[0].GetState())

	second := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# notes\n")})
	w.waitStatus("dev", first, "error", "superseded by "+second[:7])
	w.eventually(func() bool {
		_, statuses = w.deploymentOf("dev", first)
		return statuses[0].GetState() != "in_progress"
	}, "the first deployment ends")
	require.Equal(t, "inactive", statuses[0].GetState())
	require.Equal(t, "superseded by "+second[:7], statuses[0].GetDescription())

	merge := w.mergeEnvPR("dev", second)
	require.NoError(t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "success", fluxCluster1, "ok"))
	w.waitStatus("dev", second, "success", "deployed to 1 cluster")
	_, statuses = w.deploymentOf("dev", first)
	require.Equal(t, "inactive", statuses[0].GetState(), "the first deployment stays ended")
}
