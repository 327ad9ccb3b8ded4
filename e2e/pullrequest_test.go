package e2e

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// A push to an environment branch proposes exactly the tree `kalypso render` computes from the
// same inputs, in the environment's pull request.
func TestE2EEnvironmentPushProposesExpectedFiles(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]*string
		check func(t *testing.T, tree map[string]string)
	}{{
		name:  "config value",
		files: map[string]*string{"configs/dev-config.yaml": str(devConfig("Development"))},
		check: func(t *testing.T, tree map[string]string) {
			require.Contains(t, tree["large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: Development\n",
				"the composed platform config carries the new value")
		},
	}, {
		name:  "new cluster type",
		files: map[string]*string{"cluster-types/west-us/xl/xl-cluster-type.yaml": str(clusterType("xl", "large"))},
		check: func(t *testing.T, tree map[string]string) {
			for _, f := range []string{"xl/README.md", "xl/observability-prometheus/reconciler.yaml",
				"xl/observability-prometheus/namespace.yaml", "xl/observability-prometheus/platform-config.yaml"} {
				require.Contains(t, tree, f, "the new cluster type gets its folder")
			}
			require.Contains(t, tree["xl/observability-prometheus/namespace.yaml"], `name: "dev-xl-observability-prometheus"`,
				"the namespace follows <environment>-<clusterType>-<deploymentTarget>")
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.start()
			before := w.head("kalypso/dev")
			sha := w.commit(sample.ControlPlane, "dev", tc.files)

			require.Len(t, w.prsOf("kalypso/dev"), 1, "one pull request for dev")
			require.NotEqual(t, before, w.head("kalypso/dev"), "the push produces a new commit on kalypso/dev")
			got := w.tree("kalypso/dev")
			requireTree(t, w.expected("dev"), got, "kalypso/dev against kalypso render")
			tc.check(t, got)
			run := w.check(sample.ControlPlane, sha, "dev")
			require.NotNil(t, run, "a check run on the pushed commit")
			require.Equal(t, "success", run.GetConclusion(), run.GetOutput().GetSummary())
			require.Contains(t, run.GetOutput().GetSummary(), w.appPR("dev").GetHTMLURL(), "the check run links the pull request")
		})
	}
}

// A second push updates the same pull request: same number, a new head commit, no second PR.
func TestE2ESecondPushUpdatesSamePullRequest(t *testing.T) {
	w := newWorld(t)
	w.start()
	w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("First"))})
	first := w.appPR("dev")
	require.NotNil(t, first, "the first push leaves a pull request for dev")
	firstHead := w.head("kalypso/dev")

	w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Second"))})
	prs := w.prsOf("kalypso/dev")
	require.Len(t, prs, 1, "still one pull request for dev")
	require.Equal(t, first.GetNumber(), prs[0].GetNumber(), "the same pull request is updated in place")
	require.NotEqual(t, firstHead, w.head("kalypso/dev"), "the pull request has a new head commit")
	require.Equal(t, w.head("kalypso/dev"), prs[0].GetHead().GetSHA(), "the pull request shows the new head")
	require.Contains(t, w.tree("kalypso/dev")["large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: Second\n")
	requireTree(t, w.expected("dev"), w.tree("kalypso/dev"), "kalypso/dev after the second push")
	require.Len(t, w.appPRs(), 2, "one app pull request per environment, no more")
}

// The same delivery sent twice changes nothing the second time, even when newer pushes came
// in between: the app skips a delivery it has already processed, and would compute from the
// branches' current heads, not from the event, if it processed it again.
func TestE2ERedeliveredPushAddsNoCommit(t *testing.T) {
	cases := []struct {
		name  string
		later int // pushes after the one that is sent again
	}{{"latest push", 0}, {"older push after a newer one", 2}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.start()
			sha := w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Once"))})
			want := "Once"
			for i := range tc.later {
				want = fmt.Sprintf("Later-%d", i)
				w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig(want))})
			}
			head, pr := w.head("kalypso/dev"), w.appPR("dev")
			require.NotNil(t, pr)
			runs := len(w.checks(sample.ControlPlane, sha, "dev"))

			d := w.redeliver(w.pushDelivery(sha).ID)
			require.Equal(t, 2, d.Attempts, "the delivery was sent twice")
			require.Equal(t, 200, d.StatusCode, "the app accepts the redelivery")

			require.Equal(t, 2, w.processed()[d.ID], "the redelivery was acknowledged")
			require.Contains(t, w.logs.String(), skippedDelivery, "and skipped as already processed")
			require.Len(t, w.checks(sample.ControlPlane, sha, "dev"), runs, "no second check run")
			require.Equal(t, head, w.head("kalypso/dev"), "no extra commit on kalypso/dev")
			require.Contains(t, w.tree("kalypso/dev")["large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: "+want+"\n",
				"the pull request keeps the latest state")
			prs := w.prsOf("kalypso/dev")
			require.Len(t, prs, 1, "no second pull request")
			require.Equal(t, pr.GetNumber(), prs[0].GetNumber())
		})
	}
}

// A push that changes nothing in the output leaves kalypso/dev as it is, and still reports.
func TestE2EPushWithoutOutputChangeAddsNoCommit(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]*string
	}{
		{"comment in a YAML file", map[string]*string{"configs/dev-config.yaml": str("# the development environment\n" + devConfig("Dev"))}},
		{"README", map[string]*string{"README.md": str("Control plane of dev\n")}},
		{"reordered keys", map[string]*string{"cluster-types/west-us/large/large-cluster-type.yaml": str(`kind: ClusterType
apiVersion: scheduler.kalypso.io/v1alpha1
metadata:
  labels:
    size: large
    region: west-us
  name: large
spec:
  configType: configmap
  namespaceService: default
  reconciler: arc-flux
`)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.start()
			head, pr := w.head("kalypso/dev"), w.appPR("dev")
			require.NotNil(t, pr)
			sha := w.commit(sample.ControlPlane, "dev", tc.files)

			run := w.check(sample.ControlPlane, sha, "dev")
			require.NotNil(t, run, "the app processed the push")
			require.Equal(t, "success", run.GetConclusion(), run.GetOutput().GetSummary())
			require.Equal(t, head, w.head("kalypso/dev"), "no new commit on kalypso/dev")
			prs := w.prsOf("kalypso/dev")
			require.Len(t, prs, 1)
			require.Equal(t, pr.GetNumber(), prs[0].GetNumber(), "the pull request stays")
		})
	}
}

// When the GitOps branch already holds what the control plane says, the app's pull request is
// closed (not merged) and its branch deleted; it comes back with the next real change.
func TestE2EPullRequestClosedWhenNothingLeftToPropose(t *testing.T) {
	w := newWorld(t)
	w.start()
	pr := w.appPR("dev")
	require.NotNil(t, pr)
	_, err := w.sim.MergePR(sample.Owner, sample.GitOpsRepo, pr.GetNumber(), "platform-admin")
	require.NoError(t, err)
	w.settle()
	stage := w.appPR("stage")
	require.NotNil(t, stage)

	w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Temporary"))})
	opened := w.appPR("dev")
	require.NotNil(t, opened, "a real change opens a pull request")
	require.NotEqual(t, pr.GetNumber(), opened.GetNumber(), "a new one: the merged pull request is done")

	w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Dev"))})
	require.Nil(t, w.appPR("dev"), "nothing left to propose")
	closed, err := w.sim.PullRequest(sample.Owner, sample.GitOpsRepo, opened.GetNumber())
	require.NoError(t, err)
	require.Equal(t, "closed", closed.GetState())
	require.False(t, closed.GetMerged(), "closed, not merged")
	require.Empty(t, w.head("kalypso/dev"), "the app's branch is deleted")
	require.Equal(t, stage.GetNumber(), w.appPR("stage").GetNumber(), "stage's pull request is not touched")
}
