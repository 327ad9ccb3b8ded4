package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

const fluxCluster1 = "kustomization/flux-system/0c9c2e41"

func environmentDoc(name, promotion string) string {
	return fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata:
  name: %s
spec:
  controlPlane:
    repo: https://github.com/microsoft/kalypso-control-plane
    branch: %s
    path: .
  promotion:
%s`, name, name, promotion)
}

// promotionWorld starts the app with a fast compliance poll.
func promotionWorld(t *testing.T) *world {
	w := newWorld(t)
	w.start("KALYPSO_PROMOTION_POLL_INTERVAL=100ms")
	return w
}

// declareChain pushes Environments with spec.promotion to main; that commit is promoted.
func (w *world) declareChain(dev, stage string) string {
	return w.commit(sample.ControlPlane, "main", map[string]*string{
		".environments/dev.yaml":   str(environmentDoc("dev", dev)),
		".environments/stage.yaml": str(environmentDoc("stage", stage)),
	})
}

// mainStatus is the latest kalypso/<env> status of a main commit.
func (w *world) mainStatus(env, sha string) *github.RepoStatus {
	for _, st := range w.sim.Statuses(sample.Owner, sample.ControlPlane, sha) {
		if st.GetContext() == "kalypso/"+env {
			return st
		}
	}
	return nil
}

func (w *world) waitStatus(env, sha, state, descPart string) *github.RepoStatus {
	w.t.Helper()
	var st *github.RepoStatus
	w.eventually(func() bool {
		st = w.mainStatus(env, sha)
		return st != nil && st.GetState() == state && strings.Contains(st.GetDescription(), descPart)
	}, fmt.Sprintf("status kalypso/%s on %s is %s %q", env, sha[:7], state, descPart))
	return st
}

// pinOf reads the commit an environment branch pins.
func (w *world) pinOf(env string) string {
	w.t.Helper()
	text, err := w.sim.ReadFile(sample.Owner, sample.ControlPlane, env, "base-repo.yaml")
	require.NoError(w.t, err)
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "commit: "); ok {
			return v
		}
	}
	return ""
}

// mergeEnvPR merges the app's pull request of env once it proposes main commit sha.
func (w *world) mergeEnvPR(env, sha string) string {
	w.t.Helper()
	w.eventually(func() bool {
		pr := w.appPR(env)
		return pr != nil && w.tree("kalypso/" + env)[".github/tracking/Promoted_Commit_Id"] == sha
	}, "the "+env+" pull request proposes "+sha[:7])
	merge, err := w.sim.MergePR(sample.Owner, sample.GitOpsRepo, w.appPR(env).GetNumber(), "platform-lead")
	require.NoError(w.t, err)
	w.settle()
	return merge
}

func TestE2EPromotionAutomaticChain(t *testing.T) {
	w := promotionWorld(t)
	main := w.declareChain("    timeout: 1m\n    compliance: {minClusters: 1}\n", "    after: dev\n    timeout: 1m\n")
	w.waitStatus("dev", main, "pending", "waiting for the GitOps pull request to be merged")
	require.Equal(t, main, w.pinOf("dev"), "the main commit is pinned into the first environment")
	require.NotEqual(t, main, w.pinOf("stage"), "stage waits for dev")

	merge := w.mergeEnvPR("dev", main)
	w.waitStatus("dev", main, "pending", "0/1 clusters compliant")
	require.NoError(t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "success", fluxCluster1, "reconciliation succeeded"))

	w.waitStatus("dev", main, "success", "deployed to 1 cluster")
	w.waitStatus("stage", main, "pending", "waiting for the GitOps pull request to be merged")
	require.Equal(t, main, w.pinOf("stage"), "stage is promoted automatically")
	deps := w.sim.Deployments(sample.Owner, sample.ControlPlane)
	require.NotEmpty(t, deps)
	require.Equal(t, "dev", deps[0].GetEnvironment())
	require.Equal(t, main, deps[0].GetSHA())
}

func TestE2EPromotionFailingClusterStopsTheChain(t *testing.T) {
	w := promotionWorld(t)
	main := w.declareChain("    timeout: 1m\n    compliance: {minClusters: 2}\n", "    after: dev\n")
	merge := w.mergeEnvPR("dev", main)
	require.NoError(t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "success", fluxCluster1, "reconciliation succeeded"))
	require.NoError(t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "failure", "kustomization/flux-system/77aa01bc", "health check failed"))
	w.waitStatus("dev", main, "failure", "cluster kustomization/flux-system/77aa01bc failed")
	require.Nil(t, w.mainStatus("stage", main), "stage is untouched")
	require.NotEqual(t, main, w.pinOf("stage"))
	deps := w.sim.Deployments(sample.Owner, sample.ControlPlane)
	require.NotEmpty(t, deps)
}

func TestE2EPromotionTimesOutWhenAClusterNeverReports(t *testing.T) {
	w := promotionWorld(t)
	main := w.declareChain("    timeout: 2s\n    compliance: {minClusters: 1}\n", "    after: dev\n")
	w.mergeEnvPR("dev", main)
	w.waitStatus("dev", main, "failure", "timed out after 2s: 0/1 clusters compliant")
	require.Nil(t, w.mainStatus("stage", main))
}

func TestE2EPromotionManualApproval(t *testing.T) {
	w := promotionWorld(t)
	main := w.declareChain("    timeout: 1m\n    compliance: {minClusters: 1}\n", "    after: dev\n    approval: manual\n")
	merge := w.mergeEnvPR("dev", main)
	require.NoError(t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "success", fluxCluster1, "reconciliation succeeded"))
	w.waitStatus("dev", main, "success", "deployed to 1 cluster")

	var run *github.CheckRun
	w.eventually(func() bool {
		for _, r := range w.sim.CheckRuns(sample.Owner, sample.ControlPlane, main) {
			if r.GetName() == "Promote to stage" {
				run = r
			}
		}
		return run != nil
	}, "the approval check run appears")
	require.Equal(t, "action_required", run.GetConclusion())
	_, actions, err := w.sim.CheckRunDetails(run.GetID())
	require.NoError(t, err)
	require.Len(t, actions, 1)
	require.Equal(t, "Promote", actions[0].Label)
	require.NotEqual(t, main, w.pinOf("stage"), "nothing happens without a click")

	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "reader", "read"))
	require.NoError(t, w.sim.ClickCheckRunAction(run.GetID(), "promote", "reader"))
	w.settle()
	w.eventually(func() bool {
		r := w.checkRun(main, run.GetID())
		return strings.Contains(r.GetOutput().GetTitle(), "refused")
	}, "the reader is refused on the check run")
	require.Contains(t, w.checkRun(main, run.GetID()).GetOutput().GetSummary(), "@reader cannot promote to stage: it needs write permission")
	require.NotEqual(t, main, w.pinOf("stage"))

	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	require.NoError(t, w.sim.ClickCheckRunAction(run.GetID(), "promote", "lead"))
	w.settle()
	w.waitStatus("stage", main, "pending", "waiting for the GitOps pull request to be merged")
	require.Equal(t, main, w.pinOf("stage"))
	require.Equal(t, "success", w.checkRun(main, run.GetID()).GetConclusion())
	require.Equal(t, "Promoted by @lead", w.checkRun(main, run.GetID()).GetOutput().GetTitle())
	msg := w.headMessage(sample.ControlPlane, "stage")
	require.Contains(t, msg, "approved by @lead", "who approved is recorded")
}

func TestE2EPromotionNewerCommitSupersedes(t *testing.T) {
	w := promotionWorld(t)
	first := w.declareChain("    timeout: 1m\n    compliance: {minClusters: 1}\n", "    after: dev\n")
	w.waitStatus("dev", first, "pending", "waiting for the GitOps pull request")
	second := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# notes\n")})
	w.waitStatus("dev", first, "error", "superseded by "+second[:7])
	w.waitStatus("dev", second, "pending", "waiting for the GitOps pull request")
	merge := w.mergeEnvPR("dev", second)
	require.NoError(t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "success", fluxCluster1, "reconciliation succeeded"))
	w.waitStatus("dev", second, "success", "deployed")
	w.waitStatus("stage", second, "pending", "waiting for the GitOps pull request")
	merge = w.mergeEnvPR("stage", second)
	w.waitStatus("stage", second, "success", "deployed to 0 clusters")
	require.Equal(t, "error", w.mainStatus("dev", first).GetState(), "the first commit stays superseded")
}

func TestE2EPromotionResumesAfterRestart(t *testing.T) {
	w := promotionWorld(t)
	main := w.declareChain("    timeout: 1m\n    compliance: {minClusters: 1}\n", "    after: dev\n")
	merge := w.mergeEnvPR("dev", main)
	w.waitStatus("dev", main, "pending", "0/1 clusters compliant")
	w.stop()
	require.NoError(t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "success", fluxCluster1, "reconciliation succeeded"))
	w.start("KALYPSO_PROMOTION_POLL_INTERVAL=100ms")
	w.waitStatus("dev", main, "success", "deployed to 1 cluster")
	w.waitStatus("stage", main, "pending", "waiting for the GitOps pull request")
}

func TestE2EPromotionClusterReportingOnLaterCommit(t *testing.T) {
	w := promotionWorld(t)
	main := w.declareChain("    timeout: 1m\n    compliance: {minClusters: 1}\n", "    after: dev\n")
	w.mergeEnvPR("dev", main)
	later, err := w.sim.CommitFiles(sample.Owner, sample.GitOpsRepo, "dev", map[string]*string{"notes.md": str("hotfix")}, "hotfix")
	require.NoError(t, err)
	w.settle()
	require.NoError(t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, later, "success", fluxCluster1, "reconciliation succeeded"))
	w.waitStatus("dev", main, "success", "deployed to 1 cluster")
}

func TestE2EPromotionDeploymentsShowHistory(t *testing.T) {
	w := promotionWorld(t)
	first := w.declareChain("    timeout: 1m\n    compliance: {minClusters: 1}\n", "    after: dev\n")
	merge := w.mergeEnvPR("dev", first)
	require.NoError(t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "success", fluxCluster1, "ok"))
	w.waitStatus("dev", first, "success", "deployed")
	w.mergeEnvPR("stage", first)
	w.waitStatus("stage", first, "success", "deployed")

	second := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# notes\n")})
	merge = w.mergeEnvPR("dev", second)
	w.waitStatus("dev", second, "pending", "0/1 clusters compliant")
	require.NoError(t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "success", fluxCluster1, "ok"))
	w.waitStatus("dev", second, "success", "deployed to 1 cluster")
	// stage follows automatically: let the app finish pinning it before the test ends, so that
	// no push is still under way when the repositories are removed.
	w.eventually(func() bool { return w.pinOf("stage") == second }, "second is pinned into stage")
	w.settle()

	byEnv := map[string][]string{}
	for _, d := range w.sim.Deployments(sample.Owner, sample.ControlPlane) { // newest first
		byEnv[d.GetEnvironment()] = append(byEnv[d.GetEnvironment()], d.GetSHA())
	}
	require.Equal(t, []string{second, first}, byEnv["dev"])
	require.Equal(t, []string{first}, byEnv["stage"])
}

func (w *world) checkRun(sha string, id int64) *github.CheckRun {
	for _, r := range w.sim.CheckRuns(sample.Owner, sample.ControlPlane, sha) {
		if r.GetID() == id {
			return r
		}
	}
	w.t.Fatalf("no check run %d", id)
	return nil
}

func (w *world) headMessage(repo, branch string) string {
	w.t.Helper()
	sha, err := w.sim.BranchSHA(sample.Owner, repo, branch)
	require.NoError(w.t, err)
	token, err := w.sim.InstallationToken(w.seeded.Installation)
	require.NoError(w.t, err)
	gh, err := github.NewClient(nil).WithAuthToken(token).WithEnterpriseURLs(w.sim.APIURL(), w.sim.UploadURL())
	require.NoError(w.t, err)
	c, _, err := gh.Git.GetCommit(context.Background(), sample.Owner, repo, sha)
	require.NoError(w.t, err)
	return c.GetMessage()
}
