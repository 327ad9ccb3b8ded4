package e2e

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// Pushes that arrive faster than the app processes them, handled by several workers at once,
// end in the state of the last push: a reconcile that read older inputs never overwrites one
// that read newer inputs.
func TestE2EBurstOfPushesEndsInLatestState(t *testing.T) {
	w := newWorld(t)
	w.start()
	number := w.appPR("dev").GetNumber()
	w.sim.SetWebhookMode(githubsim.WebhooksAsync)
	const n = 12
	for i := range n {
		repo, files := sample.ControlPlane, map[string]*string{"configs/dev-config.yaml": str(devConfig(fmt.Sprintf("Burst-%02d", i)))}
		if i%3 == 1 {
			repo, files = sample.WorkloadRepo, map[string]*string{"workloads/observability.yaml": str(observability(fmt.Sprintf("./prometheus-%02d", i)))}
		}
		_, err := w.sim.CommitFiles(sample.Owner, repo, branchOf(repo), files, fmt.Sprintf("change %d", i))
		require.NoError(t, err)
	}
	w.settle()

	got := w.tree("kalypso/dev")
	require.Contains(t, got["large/observability-prometheus/platform-config.yaml"], fmt.Sprintf("ENVIRONMENT: Burst-%02d\n", n-1))
	requireTree(t, w.expected("dev"), got, "kalypso/dev after the burst")
	prs := w.prsOf("kalypso/dev")
	require.Len(t, prs, 1)
	require.Equal(t, number, prs[0].GetNumber())
}

func branchOf(repo string) string {
	if repo == sample.ControlPlane {
		return "dev"
	}
	return "main"
}
