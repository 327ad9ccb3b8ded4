package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// guardFixture renders the fixture into a GitOps folder, then declares dev's guard on main.
func guardFixture(t *testing.T, guard string) (*fleetFixture, string) {
	t.Helper()
	f := newFleetFixture(t)
	out := filepath.Join(t.TempDir(), "gitops")
	renderFixture(t, f, out)
	f.write(t, "main", ".environments/dev.yaml", "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata:\n  name: dev\n"+
		"spec:\n  controlPlane: {repo: https://github.com/microsoft/kalypso-control-plane, branch: dev, path: .}\n  guard:\n"+guard)
	return f, out
}

// plan --diff prints the whole-file unified diff of exactly the changed assignments.
func TestPlanDiffShowsTheChangedAssignments(t *testing.T) {
	f, out := guardFixture(t, "    maxChanged: 100%\n")
	f.edit(t, "env", "cluster-types/west-us/west-us-config.yaml", "mysql://west:8806/mysql2", "mysql://west:8806/mysql3")
	code, stdout, stderr := runCLI(t, append([]string{"plan", "--diff", "--gitops-dir", out}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "### small/observability-grafana (1 file changed)\n--- a/small/observability-grafana/platform-config.yaml\n+++ b/small/observability-grafana/platform-config.yaml\n@@ -1,11 +1,11 @@\n apiVersion: v1\n")
	require.Contains(t, stdout, "\n-  DATABASE_URL: mysql://west:8806/mysql2\n+  DATABASE_URL: mysql://west:8806/mysql3\n")
	var headers []string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "### ") {
			headers = append(headers, line)
		}
	}
	require.Equal(t, []string{"### large/observability-grafana (1 file changed)", "### large/observability-prometheus (1 file changed)",
		"### small/observability-grafana (1 file changed)", "### small/observability-prometheus (1 file changed)"}, headers, "the west-us clusters")

	code, stdout, _ = runCLI(t, append([]string{"plan", "--gitops-dir", out}, f.args()...)...)
	require.Equal(t, 0, code)
	require.NotContains(t, stdout, "@@", "without --diff only the plan")
}

// plan fails with the measured figure when the change exceeds the guard, unless accepted.
func TestPlanAppliesTheGuard(t *testing.T) {
	f, out := guardFixture(t, "    maxRemoved: 10%\n    maxClusterTypes: 5\n")
	require.NoError(t, os.Remove(filepath.Join(f.env, "scheduling/small-policy.yaml")))
	code, _, stderr := runCLI(t, append([]string{"plan", "--gitops-dir", out}, f.args()...)...)
	require.Equal(t, 1, code, stderr)
	require.Regexp(t, `environment dev: blast radius: the change removes \d+ of \d+ assignments \([0-9.]+%\), more than maxRemoved 10%`, stderr)
	require.Contains(t, stderr, "--accept-blast-radius")
	require.NotContains(t, stderr, "maxClusterTypes")

	code, _, stderr = runCLI(t, append([]string{"plan", "--accept-blast-radius", "--gitops-dir", out}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "the blast radius is accepted")
}

// A broken guard is an error at its line and fails closed.
func TestPlanReportsABrokenGuard(t *testing.T) {
	f, out := guardFixture(t, "    maxRemoved: lots\n")
	code, _, stderr := runCLI(t, append([]string{"plan", "--gitops-dir", out}, f.args()...)...)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, ".environments/dev.yaml:8: Environment \"dev\": spec.guard.maxRemoved: \"lots\" is neither")
}
