package promote

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// TestExpectedClustersLooksPastTheNewestTen checks that the clusters a promotion expects come
// from the previous successful Deployment of the environment however many failed since.
func TestExpectedClustersLooksPastTheNewestTen(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", "")
	const good, bad = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	w.gh.SetStatus(gitopsRepo, good, cluster1, "success")
	w.gh.SetStatus(gitopsRepo, good, cluster2, "success")
	w.gh.SetStatus(gitopsRepo, bad, cluster1, "failure")
	deploy(t, w.gh, "dev", "1111111111111111111111111111111111111111", good, "success", 1)
	deploy(t, w.gh, "dev", "2222222222222222222222222222222222222222", bad, "failure", 130)
	now := deploy(t, w.gh, "dev", "3333333333333333333333333333333333333333", "", "in_progress", 1)
	d := &deployment{Locator: w.loc("dev", "3333333333333333333333333333333333333333"), GitOps: gitopsRepo, ID: now[0],
		Stage: &scheduling.Stage{Contexts: []string{"kustomization/*"}}}
	require.Equal(t, []string{cluster1, cluster2}, w.p.expectedClusters(context.Background(), d))
	require.Equal(t, 2, w.gh.Count("Deployments"), "pages of 100 until found")
}

// TestExpectedClustersStopsAtTheLimit checks that the search is bounded: past the setting no
// cluster is expected (the stage's minimum still applies).
func TestExpectedClustersStopsAtTheLimit(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", "")
	w.gh.Lists.Deployments = 100
	const good = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	w.gh.SetStatus(gitopsRepo, good, cluster1, "success")
	deploy(t, w.gh, "dev", "1111111111111111111111111111111111111111", good, "success", 1)
	deploy(t, w.gh, "dev", "2222222222222222222222222222222222222222", "g", "failure", 100)
	d := &deployment{Locator: w.loc("dev", "3"), GitOps: gitopsRepo, Stage: &scheduling.Stage{Contexts: []string{"kustomization/*"}}}
	require.Empty(t, w.p.expectedClusters(context.Background(), d))
	require.Equal(t, 100, w.gh.Count("LatestDeploymentStatus"), "no status read past the bound")
}

// TestRollbackFindsAnOlderSuccessPastFifty checks that a rollback finds the previous
// successful deployment behind more failed ones than a page holds, and that past the bound it
// answers nothing to roll back to, naming the setting.
func TestRollbackFindsAnOlderSuccessPastFifty(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", "")
	const good, pinned = "1111111111111111111111111111111111111111", "3333333333333333333333333333333333333333"
	deploy(t, w.gh, "dev", good, "g0", "success", 1)
	for i := range 120 {
		deploy(t, w.gh, "dev", fmt.Sprintf("2%039d", i), "g", "failure", 1)
	}
	deploy(t, w.gh, "dev", pinned, "g2", "success", 1)
	got, err := w.p.previousDeployed(context.Background(), w.loc("dev", ""), pinned)
	require.NoError(t, err)
	require.Equal(t, good, got)

	w.gh.Lists.Deployments = 100
	_, err = w.p.previousDeployed(context.Background(), w.loc("dev", ""), pinned)
	require.ErrorIs(t, err, ErrNothingToRollBack)
	require.Contains(t, err.Error(), "among its newest 100 Deployments, "+ghport.SettingMaxDeployments)
}
