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
	return fleetOf(w, 10, 100)
}

// fleetOf adds n large cluster types to dev and a workload with m observability targets, so
// that dev has (n+1) × (m+1) assignments.
func fleetOf(w *world, n, m int) (clusterTypes, targets int) {
	w.t.Helper()
	var cts strings.Builder
	for i := range n {
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
	for i := range m {
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
	return n + 1, m + 1
}

// A single-file control-plane change on a fleet of more than 1,000 assignments costs at most
// 10 REST calls end to end: bulk content travels over git.
func TestE2ESingleChangeOnLargeFleetStaysWithinRESTBudget(t *testing.T) {
	const budget = 10
	w := newWorld(t)
	clusterTypes, targets := fleet(w)
	w.start()
	w.settle()
	assignments := countAssignments(w.tree("kalypso/dev"))
	require.Equal(t, clusterTypes*targets, assignments, "the fleet is rendered")
	require.GreaterOrEqual(t, assignments, 1000)

	changes := []struct {
		name  string
		path  string
		file  string
		check func(t *testing.T, tree map[string]string)
	}{{
		name: "a config every assignment uses", path: "configs/dev-config.yaml", file: devConfig("Budget"),
		check: func(t *testing.T, tree map[string]string) {
			n := 0
			for p, content := range tree {
				if strings.HasSuffix(p, "/platform-config.yaml") {
					require.Contains(t, content, "ENVIRONMENT: Budget\n", p)
					n++
				}
			}
			require.Equal(t, assignments, n, "every assignment got the change")
		},
	}, {
		name: "one more cluster type", path: "cluster-types/west-us/xl/xl-cluster-type.yaml", file: clusterType("xl", "large"),
		check: func(t *testing.T, tree map[string]string) {
			require.Equal(t, assignments+targets, countAssignments(tree), "the new cluster type gets every target")
			require.Contains(t, tree, "xl/fleet-svc-099/platform-config.yaml")
		},
	}}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			w.sim.ResetCalls()
			sha := w.commit(sample.ControlPlane, "dev", map[string]*string{c.path: str(c.file)})
			calls := w.sim.Calls()
			require.LessOrEqual(t, w.sim.TotalCalls(), budget, "REST calls: %v (git: %v)", calls, w.sim.GitCalls())
			t.Logf("REST calls: %d %v; git requests: %v", w.sim.TotalCalls(), calls, w.sim.GitCalls())
			c.check(t, w.tree("kalypso/dev"))
			run := w.check(sample.ControlPlane, sha, "dev")
			require.NotNil(t, run)
			require.Equal(t, "success", run.GetConclusion())
			require.Len(t, w.prsOf("kalypso/dev"), 1)
		})
	}
}

func countAssignments(tree map[string]string) int {
	n := 0
	for p := range tree {
		if strings.HasSuffix(p, "/platform-config.yaml") {
			n++
		}
	}
	return n
}
