package e2e

import (
	"fmt"
	"testing"
	"time"

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

// BenchmarkE2EPreview measures, on fleets of 10,100 and 101,000 assignments, the time from a
// one-file commit on a pull request into dev until its preview check run is completed:
// webhook, fetch of refs/pull/N/merge, incremental render from the cached result, diff and
// check run. Run with: go test -run '^$' -bench 'E2EPreview/10k$' -benchtime 10x ./e2e
func BenchmarkE2EPreview(b *testing.B) {
	for _, size := range fleetSizes {
		if size.name == "10k" || size.name == "100k" {
			b.Run(size.name, func(b *testing.B) { benchmarkPreview(b, size.clusterTypes) })
		}
	}
}

func benchmarkPreview(b *testing.B, fleet int) {
	w := newWorld(b)
	w.patience = 15 * time.Minute // the first proposal of a large fleet takes minutes
	clusterTypes, targets := fleetOf(w, fleet, 100)
	w.start()
	w.settle()
	b.ReportMetric(float64(clusterTypes*targets), "assignments")
	cfg := func(i int) *string {
		return str(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: large-config\n  labels:\n     platform-config: \"true\"\n     cluster-type: large\ndata:\n  CLUSTER_NAME: Large %d\n", i))
	}
	file := "cluster-types/west-us/large/large-config.yaml"
	number, head, err := w.sim.OpenForkPR(sample.Owner, sample.ControlPlane, "mallory", "dev", map[string]*string{file: cfg(-1)}, "Tune", "mallory")
	require.NoError(b, err)
	w.settle()
	require.Len(b, w.previews(sample.ControlPlane, head, "dev"), 1)
	b.ResetTimer()
	for i := range b.N {
		head, err = w.sim.PushForkPR(sample.Owner, sample.ControlPlane, number, map[string]*string{file: cfg(i)}, "Tune again")
		require.NoError(b, err)
		w.settle()
		runs := w.previews(sample.ControlPlane, head, "dev")
		require.Len(b, runs, 1)
		require.Equal(b, "success", runs[0].GetConclusion())
	}
}
