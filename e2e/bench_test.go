package e2e

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// BenchmarkE2EWebhookToPullRequest measures, on a GitOps repository of 10,100 assignments
// (30,000 files), the time from a one-file push to the control plane until the app has updated
// its pull request: webhook, fetch, incremental render, commit, push and PR update.
// Run with: go test -run '^$' -bench WebhookToPullRequest -benchtime 10x ./e2e
func BenchmarkE2EWebhookToPullRequest(b *testing.B) {
	w := newWorld(b)
	clusterTypes, targets := fleetOf(w, 99, 100)
	w.start()
	w.settle()
	require.Equal(b, clusterTypes*targets, countAssignments(w.tree("kalypso/dev")))
	b.ReportMetric(float64(clusterTypes*targets), "assignments")
	// The first change warms the incremental cache; measured changes then touch one cluster type.
	change := func(i int) {
		cfg := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: large-config\n  labels:\n     platform-config: \"true\"\n     cluster-type: large\ndata:\n  CLUSTER_NAME: Large %d\n", i)
		before := w.head("kalypso/dev")
		w.commit(sample.ControlPlane, "dev", map[string]*string{"cluster-types/west-us/large/large-config.yaml": str(cfg)})
		require.NotEqual(b, before, w.head("kalypso/dev"), "the pull request was updated")
	}
	change(-1)
	b.ResetTimer()
	for i := range b.N {
		change(i)
	}
}
