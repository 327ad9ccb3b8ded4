package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// A GitOpsRepo with spec.path gets its manifests below that folder; the rest of the GitOps
// branch is left as it is.
func TestE2EGitOpsRepoPathIsHonoured(t *testing.T) {
	w := newWorld(t)
	w.start()
	base := w.tree("dev")
	w.commit(sample.ControlPlane, "dev", map[string]*string{"gitops-repo.yaml": str(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: GitOpsRepo
metadata:
  name: dev
spec:
  repo: https://github.com/microsoft/kalypso-gitops
  branch: dev
  path: clusters/dev
`)})

	require.Len(t, w.prsOf("kalypso/dev"), 1)
	got := w.tree("kalypso/dev")
	for p, content := range got {
		if !strings.HasPrefix(p, "clusters/dev/") {
			require.Equal(t, base[p], content, "%s outside the path is the GitOps branch's", p)
		}
	}
	for p, content := range base {
		require.Contains(t, got, p, "%s outside the path stays", p)
		if !strings.HasPrefix(p, "clusters/dev/") {
			require.Equal(t, content, got[p])
		}
	}
	for _, f := range []string{"clusters/dev/.github/tracking/Promoted_Commit_Id", "clusters/dev/large/README.md",
		"clusters/dev/large/observability-prometheus/reconciler.yaml", "clusters/dev/large/observability-prometheus/namespace.yaml",
		"clusters/dev/large/observability-prometheus/platform-config.yaml"} {
		require.Contains(t, got, f, "the manifests go below clusters/dev")
	}
	require.Equal(t, w.seeded.MainSHA, got["clusters/dev/.github/tracking/Promoted_Commit_Id"])
	requireTree(t, w.expected("dev"), got, "kalypso/dev against kalypso render")

	// A later change lands below the path too.
	w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Pathed"))})
	got = w.tree("kalypso/dev")
	require.Contains(t, got["clusters/dev/large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: Pathed\n")
	require.Equal(t, base["large/observability-prometheus/reconciler.yaml"], got["large/observability-prometheus/reconciler.yaml"])
}
