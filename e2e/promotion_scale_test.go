package e2e

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// clusterContext is the Flux status context of the i-th cluster; they sort in cluster order.
func clusterContext(i int) string { return fmt.Sprintf("kustomization/flux-system/c%04d", i) }

// reportClusters posts n clusters' reports on a GitOps commit, all successful but the one
// named failing, if any.
func (w *world) reportClusters(commit string, n int, failing string) {
	w.t.Helper()
	for i := range n {
		state := "success"
		if clusterContext(i) == failing {
			state = "failure"
		}
		require.NoError(w.t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, commit, state, clusterContext(i), "reconciliation "+state))
	}
}

// promoteToClusters declares a chain whose dev waits for n clusters, merges dev's pull
// request and waits until the app polls; it returns the main commit and the merge.
func (w *world) promoteToClusters(n int) (string, string) {
	w.t.Helper()
	main := w.declareChain(fmt.Sprintf("    timeout: 2m\n    compliance: {minClusters: %d}\n", n), "    after: dev\n")
	merge := w.mergeEnvPR("dev", main)
	w.waitStatus("dev", main, "pending", fmt.Sprintf("0/%d clusters compliant", n))
	return main, merge
}

func TestE2EPromotionOf150Clusters(t *testing.T) {
	w := promotionWorld(t)
	main, merge := w.promoteToClusters(150)
	w.reportClusters(merge, 150, "")
	w.waitStatus("dev", main, "success", "deployed to 150 clusters")
	w.waitStatus("stage", main, "pending", "waiting for the GitOps pull request")
}

func TestE2EPromotionOf1000Clusters(t *testing.T) {
	w := promotionWorld(t)
	main, merge := w.promoteToClusters(1000)
	w.reportClusters(merge, 1000, "")
	w.waitStatus("dev", main, "success", "deployed to 1000 clusters")
}

func TestE2EPromotionFailsOnAClusterOfTheLastPage(t *testing.T) {
	w := promotionWorld(t)
	main, merge := w.promoteToClusters(1000)
	last := clusterContext(999) // the last context of the tenth page of 100
	w.reportClusters(merge, 1000, last)
	w.waitStatus("dev", main, "failure", "cluster "+last+" failed")
	require.Nil(t, w.mainStatus("stage", main), "stage is untouched")
}

func TestE2EPromotionOfMoreClustersThanTheLimit(t *testing.T) {
	w := newWorld(t)
	w.start("KALYPSO_PROMOTION_POLL_INTERVAL=100ms", "KALYPSO_PROMOTION_MAX_CLUSTERS=120")
	main, merge := w.promoteToClusters(150)
	w.reportClusters(merge, 150, "")
	w.waitStatus("dev", main, "failure", "more than 120 commit statuses on "+sample.Owner+"/"+sample.GitOpsRepo+"@"+merge[:7]+" (promotion.maxClusters)")
}
