package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/render"
)

// renderFixture renders the fixture into out and returns the tree; it fails on any error.
func renderFixture(t *testing.T, f *fleetFixture, out string) map[string]string {
	t.Helper()
	code, _, stderr := runCLI(t, append([]string{"render", "--out", out}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	return readDir(t, out)
}

// Removed assignments vanish, and files nobody produces inside deployment-target folders are
// deleted; files at the GitOps root, in dot-folders and outside the GitOps path stay.
func TestDivergenceRemovedAssignmentsAndUnmanagedFilesVanish(t *testing.T) {
	f := newFleetFixture(t)
	out := filepath.Join(t.TempDir(), "out")
	renderFixture(t, f, out)
	for _, p := range []string{"README.md", ".github/workflows/check.yaml", "small/observability-grafana/extra.yaml", "small/notes.txt"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(out, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(out, p), []byte("x"), 0o644))
	}
	require.NoError(t, os.Remove(filepath.Join(f.env, "scheduling/small-policy.yaml")))

	tree := renderFixture(t, f, out)
	require.Contains(t, tree, "README.md")
	require.Contains(t, tree, ".github/workflows/check.yaml")
	require.Contains(t, tree, "small/README.md")
	require.Contains(t, tree, largeTemplates)
	for p := range tree {
		require.False(t, strings.HasPrefix(p, "small/observability-"), "removed assignment left %s", p)
	}
	require.NotContains(t, tree, "small/notes.txt")
}

// Two policies that select the same assignment produce it once, and nothing fails.
func TestDivergenceOverlappingPoliciesMerge(t *testing.T) {
	f := newFleetFixture(t)
	f.write(t, "env", "scheduling/everything.yaml", `apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: everything-large
spec:
  deploymentTargetSelector:
    labelSelector: {}
  clusterTypeSelector:
    labelSelector:
      matchExpressions:
        - {key: size, operator: In, values: [large, small]}
`)
	code, stdout, stderr := runCLI(t, append([]string{"validate"}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "4 assignments")
}

// Changing a cluster type, a template, a config or the pin re-renders what depends on it.
func TestDivergenceChangesReRender(t *testing.T) {
	cases := map[string]struct {
		which, file, old, new, path, want string
	}{
		"cluster type": {"env", "cluster-types/west-us/large/large-cluster-type.yaml", "reconciler: arc-flux", "reconciler: argocd",
			largeTemplates, "kind: Application"},
		"template": {"main", "templates/scheduler_v1alpha1_template_namespace.yaml", "someLabel: some-value", "someLabel: other-value",
			"large/observability-prometheus/namespace.yaml", "someLabel: other-value"},
		"config": {"env", "configs/dev-config.yaml", "ENVIRONMENT: Dev", "ENVIRONMENT: Development",
			"large/observability-prometheus/platform-config.yaml", "ENVIRONMENT: Development"},
		"pin": {"env", "base-repo.yaml", "commit: " + mainHeadID, "commit: 0123456789abcdef0123456789abcdef01234567",
			".github/tracking/Promoted_Commit_Id", "0123456789abcdef0123456789abcdef01234567"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFleetFixture(t)
			out := filepath.Join(t.TempDir(), "out")
			before := renderFixture(t, f, out)
			require.NotContains(t, before[tc.path], tc.want)
			f.edit(t, tc.which, tc.file, tc.old, tc.new)
			after := renderFixture(t, f, out)
			require.Contains(t, after[tc.path], tc.want)
		})
	}
}

// GitOpsRepo.spec.path puts the output below that folder and leaves the rest of the repo alone.
func TestDivergenceGitOpsPathHonoured(t *testing.T) {
	f := newFleetFixture(t)
	f.edit(t, "env", "gitops-repo.yaml", "path: .", "path: clusters/dev")
	out := filepath.Join(t.TempDir(), "out")
	require.NoError(t, os.MkdirAll(filepath.Join(out, "large"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "large/keep.yaml"), []byte("x"), 0o644))
	tree := renderFixture(t, f, out)
	require.Contains(t, tree, "clusters/dev/"+largeTemplates)
	require.Contains(t, tree, "clusters/dev/.github/tracking/Promoted_Commit_Id")
	require.Contains(t, tree, "large/keep.yaml")
	for p := range tree {
		require.True(t, strings.HasPrefix(p, "clusters/dev/") || p == "large/keep.yaml", p)
	}
}

// The workspace comes from the registration, even when the environment's name has a dash
// (the reference splits a Flux object name at the first dash and gets it wrong).
func TestDivergenceWorkspaceFromRegistration(t *testing.T) {
	f := newFleetFixture(t)
	f.write(t, "main", ".environments/dev-eu.yaml", "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata:\n  name: dev-eu\nspec:\n  controlPlane:\n    repo: https://github.com/microsoft/kalypso-control-plane\n    branch: dev\n    path: .\n")
	code, stdout, stderr := runCLI(t, append([]string{"validate", "--environment", "dev-eu"}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "environment dev-eu is valid: 4 cluster types, 0 deployment targets")

	f.edit(t, "workloads", "microsoft/kalypso-svc-src/main/workloads/observability.yaml", "environment: dev\n      manifests:\n        repo: https://github.com/microsoft/kalypso-svc-gitops\n        branch: dev\n        path: ./prometheus",
		"environment: dev-eu\n      manifests:\n        repo: https://github.com/microsoft/kalypso-svc-gitops\n        branch: dev\n        path: ./prometheus")
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr = runCLI(t, append([]string{"render", "--environment", "dev-eu", "--out", out}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	ns := readDir(t, out)["large/observability-prometheus/namespace.yaml"]
	require.Contains(t, ns, `workspace: "platform-team"`)
	require.Contains(t, ns, `name: "dev-eu-large-observability-prometheus"`)
}

// render --out deletes only what Kalypso manages: files in cluster-type folders (of the
// snapshot, or former ones recognised by their README) that it no longer produces. It names
// each path it removes; files in other folders stay, whatever their depth.
func TestRenderDeletesOnlyManagedFiles(t *testing.T) {
	f := newFleetFixture(t)
	out := filepath.Join(t.TempDir(), "out")
	renderFixture(t, f, out)
	unrelated := []string{"docs/x.md", "unrelated/sub/file.txt", "apps/prometheus/values.yaml", "README.md", ".github/workflows/check.yaml"}
	stale := []string{"small/observability-grafana/extra.yaml", "small/notes.txt", "retired/README.md", "retired/old-target/reconciler.yaml"}
	for _, p := range append(append([]string{}, unrelated...), stale...) {
		content := "x"
		if strings.HasSuffix(p, "/README.md") {
			content = render.ReadmeText
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(out, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(out, p), []byte(content), 0o644))
	}

	code, stdout, stderr := runCLI(t, append([]string{"plan", "--gitops-dir", out}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	for _, p := range unrelated {
		require.NotContains(t, stdout, " "+p+"\n")
	}

	code, stdout, stderr = runCLI(t, append([]string{"render", "--out", out}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	tree := readDir(t, out)
	for _, p := range unrelated {
		require.Contains(t, tree, p, "render removed %s, which Kalypso does not manage", p)
	}
	for _, p := range stale {
		require.NotContains(t, tree, p)
		require.Contains(t, stdout, "removed "+p+"\n")
	}
	require.Contains(t, stdout, fmt.Sprintf("%d removed", len(stale)))
}

// plan compares with an existing folder: a missing one is an error, not an empty tree.
func TestPlanNeedsAnExistingGitOpsDir(t *testing.T) {
	f := newFleetFixture(t)
	missing := filepath.Join(t.TempDir(), "nonexistent")
	code, stdout, stderr := runCLI(t, append([]string{"plan", "--gitops-dir", missing}, f.args()...)...)
	require.Equal(t, 2, code)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "flag --gitops-dir: read "+missing)
}

// render does not write through a symbolic link in --out.
func TestRenderDoesNotWriteThroughSymlinks(t *testing.T) {
	f := newFleetFixture(t)
	out, elsewhere := filepath.Join(t.TempDir(), "out"), t.TempDir()
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(out, "large")))
	code, _, stderr := runCLI(t, append([]string{"render", "--out", out}, f.args()...)...)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "render does not write through symbolic links")
	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	require.Empty(t, entries)
}
