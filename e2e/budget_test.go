package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// fleet adds 10 large cluster types to dev and a workload with 100 observability targets, so
// that dev has 11 × 101 = 1,111 assignments.
func fleet(w *world) (clusterTypes, targets int) {
	w.t.Helper()
	var cts strings.Builder
	for i := range 10 {
		fmt.Fprintf(&cts, "---\n%s", clusterType(fmt.Sprintf("large-%02d", i), "large"))
	}
	var wl strings.Builder
	wl.WriteString(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: fleet
  labels:
    stack: observability
spec:
  deploymentTargets:
`)
	for i := range 100 {
		fmt.Fprintf(&wl, `    - name: svc-%03d
      environment: dev
      manifests:
        repo: https://github.com/microsoft/kalypso-svc-gitops
        branch: dev
        path: ./svc-%03d
`, i, i)
	}
	w.commit(sample.ControlPlane, "dev", map[string]*string{"cluster-types/fleet.yaml": str(cts.String())})
	w.commit(sample.WorkloadRepo, "main", map[string]*string{"workloads/fleet.yaml": str(wl.String())})
	return 11, 101
}

// A single-file control-plane change on a fleet of more than 1,000 assignments costs at most
// 10 REST calls end to end: bulk content travels over git.
func TestE2ESingleChangeOnLargeFleetStaysWithinRESTBudget(t *testing.T) {
	const budget = 10
	w := newWorld(t)
	clusterTypes, targets := fleet(w)
	w.start()
	w.settle()
	before := w.tree("kalypso/dev")
	assignments := 0
	for p := range before {
		if strings.HasSuffix(p, "/platform-config.yaml") {
			assignments++
		}
	}
	require.Equal(t, clusterTypes*targets, assignments, "the fleet is rendered")
	require.GreaterOrEqual(t, assignments, 1000)

	w.sim.ResetCalls()
	sha := w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Budget"))})

	calls := w.sim.Calls()
	require.LessOrEqual(t, w.sim.TotalCalls(), budget, "REST calls: %v (git: %v)", calls, w.sim.GitCalls())
	after := w.tree("kalypso/dev")
	changed := 0
	for p, content := range after {
		if strings.HasSuffix(p, "/platform-config.yaml") {
			require.Contains(t, content, "ENVIRONMENT: Budget\n", p)
			changed++
		}
	}
	require.Equal(t, assignments, changed, "every assignment got the change")
	run := w.check(sample.ControlPlane, sha, "dev")
	require.NotNil(t, run)
	require.Equal(t, "success", run.GetConclusion())
	require.Len(t, w.prsOf("kalypso/dev"), 1)
	t.Logf("REST calls: %d %v; git requests: %v", w.sim.TotalCalls(), calls, w.sim.GitCalls())
}
