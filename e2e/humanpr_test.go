package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// A person's pull request on the GitOps repository survives everything the app does: pushes,
// a rebase of the app's branch, merging and retiring the app's pull request, re-runs, restarts.
func TestE2EHumanPullRequestSurvivesAppActions(t *testing.T) {
	w := newWorld(t)
	w.start()
	_, err := w.sim.CommitFiles(sample.Owner, sample.GitOpsRepo, "alice/tune-large",
		map[string]*string{"large/observability-prometheus/extra.yaml": str("kind: ConfigMap\n")}, "Tune large")
	require.NoError(t, err)
	number, err := w.sim.OpenPR(sample.Owner, sample.GitOpsRepo, "alice/tune-large", "dev", "Tune large", "By hand", "alice")
	require.NoError(t, err)
	w.settle()
	human, err := w.sim.PullRequest(sample.Owner, sample.GitOpsRepo, number)
	require.NoError(t, err)

	actions := []struct {
		name string
		do   func(t *testing.T)
	}{
		{"environment push", func(t *testing.T) {
			w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Tuned"))})
		}},
		{"workload push", func(t *testing.T) {
			w.commit(sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(observability("./prom"))})
		}},
		{"push to the GitOps branch", func(t *testing.T) {
			w.commit(sample.GitOpsRepo, "dev", map[string]*string{"CODEOWNERS": str("* @platform\n")})
			require.Contains(t, w.tree("kalypso/dev"), "CODEOWNERS", "the app's branch is rebased on the new GitOps head")
		}},
		{"push without output change", func(t *testing.T) {
			w.commit(sample.ControlPlane, "dev", map[string]*string{"README.md": str("dev\n")})
		}},
		{"re-run of a check", func(t *testing.T) {
			sha, err := w.sim.BranchSHA(sample.Owner, sample.ControlPlane, "dev")
			require.NoError(t, err)
			run := w.check(sample.ControlPlane, sha, "dev")
			require.NotNil(t, run)
			require.NoError(t, w.sim.RerequestCheckRun(run.GetID(), "alice"))
			w.settle()
		}},
		{"merge of the app's pull request", func(t *testing.T) {
			pr := w.appPR("dev")
			require.NotNil(t, pr)
			_, err := w.sim.MergePR(sample.Owner, sample.GitOpsRepo, pr.GetNumber(), "platform-admin")
			require.NoError(t, err)
			w.settle()
			require.Nil(t, w.appPR("dev"), "nothing left to propose")
		}},
		{"restart and resync", func(t *testing.T) {
			w.stop()
			w.start()
			w.settle()
		}},
		{"push after the merge", func(t *testing.T) {
			w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Again"))})
			require.NotNil(t, w.appPR("dev"), "the app proposes again")
		}},
	}
	for _, a := range actions {
		t.Run(a.name, func(t *testing.T) {
			a.do(t)
			now, err := w.sim.PullRequest(sample.Owner, sample.GitOpsRepo, number)
			require.NoError(t, err)
			require.Equal(t, "open", now.GetState(), "the human pull request stays open")
			require.Equal(t, human.GetHead().GetSHA(), now.GetHead().GetSHA(), "its branch is not touched")
			require.Equal(t, human.GetTitle(), now.GetTitle())
			require.Equal(t, human.GetBody(), now.GetBody())
			require.Empty(t, now.Labels, "no label added")
			require.Empty(t, w.sim.Comments(sample.Owner, sample.GitOpsRepo, number), "no comment added")
			require.LessOrEqual(t, len(w.prsOf("kalypso/dev")), 1, "at most one app pull request for dev")
		})
	}
}
