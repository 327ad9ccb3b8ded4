package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// A re-run of an environment's check on a main commit validates that commit again (not the
// commit the environment pins), with its annotations.
func TestE2ERerunOnMainRevalidatesThatCommit(t *testing.T) {
	w := newWorld(t)
	w.start()
	broken := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Template\nmetadata:\n  name: default\nspec:\n  type: namespace\n  manifests:\n    - \"{{ .Nope }}\"\n"
	sha := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/scheduler_v1alpha1_template_namespace.yaml": str(broken)})
	runs := w.sim.CheckRuns(sample.Owner, sample.ControlPlane, sha)
	var devRun int64
	for _, r := range runs {
		if r.GetName() == "Kalypso / dev" {
			devRun = r.GetID()
			require.Equal(t, "failure", r.GetConclusion())
		}
	}
	require.NotZero(t, devRun, "main is validated against dev")

	require.NoError(t, w.sim.RerequestCheckRun(devRun, "octocat"))
	w.settle()
	var again int
	for _, r := range w.sim.CheckRuns(sample.Owner, sample.ControlPlane, sha) {
		if r.GetName() != "Kalypso / dev" || r.GetID() == devRun {
			continue
		}
		again++
		require.Equal(t, "failure", r.GetConclusion(), "the re-run validates the main commit, whose template is broken")
		anns, _, err := w.sim.CheckRunDetails(r.GetID())
		require.NoError(t, err)
		require.NotEmpty(t, anns)
		require.Equal(t, "templates/scheduler_v1alpha1_template_namespace.yaml", anns[0].GetPath())
		require.Equal(t, 8, anns[0].GetStartLine())
	}
	require.Equal(t, 1, again)
}
