package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// A push to a registered workload branch updates every environment where the workload has
// targets (dev), and leaves the others alone (stage).
func TestE2EWorkloadPushUpdatesAffectedEnvironments(t *testing.T) {
	w := newWorld(t)
	w.start()
	devHead, stageHead := w.head("kalypso/dev"), w.head("kalypso/stage")
	require.NotEmpty(t, stageHead, "the first resync proposes stage")
	devPR, stagePR := w.appPR("dev"), w.appPR("stage")

	sha := w.commit(sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(observability("./prometheus-v2"))})

	require.NotEqual(t, devHead, w.head("kalypso/dev"), "dev is updated")
	dev := w.tree("kalypso/dev")
	require.Contains(t, dev["large/observability-prometheus/reconciler.yaml"], `path: "./prometheus-v2"`,
		"the reconciler reads the new path")
	requireTree(t, w.expected("dev"), dev, "kalypso/dev after the workload push")
	require.Equal(t, devPR.GetNumber(), w.appPR("dev").GetNumber(), "dev keeps its pull request")

	require.Equal(t, stageHead, w.head("kalypso/stage"), "stage is untouched")
	require.Equal(t, stagePR.GetNumber(), w.appPR("stage").GetNumber(), "stage keeps its pull request")
	require.Len(t, w.appPRs(), 2)

	run := w.check(sample.WorkloadRepo, sha, "dev")
	require.NotNil(t, run, "a check run for dev on the workload commit")
	require.Equal(t, "success", run.GetConclusion(), run.GetOutput().GetSummary())
}
