package e2e

import (
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

const devPolicy = "scheduling/platform-services/observability-policy.yaml"

// actionsOf returns the identifiers of the buttons a check run shows.
func (w *world) actionsOf(run *github.CheckRun) []string {
	w.t.Helper()
	_, actions, err := w.sim.CheckRunDetails(run.GetID())
	require.NoError(w.t, err)
	var out []string
	for _, a := range actions {
		out = append(out, a.Identifier)
	}
	return out
}

// A pull request removing every assignment of dev, over `maxRemoved: 10%`, fails its preview;
// a reader's click on Accept is refused, a writer's is recorded and turns it to success. The
// same change pushed straight to dev is held out of the GitOps pull request until accepted.
func TestE2EBlastRadiusGuard(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "reader", "read"))
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	env, err := w.sim.ReadFile(sample.Owner, sample.ControlPlane, "main", ".environments/dev.yaml")
	require.NoError(t, err)
	guarded := strings.TrimRight(env, " \n") + "\n  guard:\n    maxRemoved: 10%\n"
	w.commit(sample.ControlPlane, "main", map[string]*string{".environments/dev.yaml": &guarded})
	w.start()

	number, head, err := w.sim.OpenForkPR(sample.Owner, sample.ControlPlane, "mallory", "dev", map[string]*string{devPolicy: nil}, "Drop observability", "mallory")
	require.NoError(t, err)
	w.settle()
	runs := w.previews(sample.ControlPlane, head, "dev")
	require.Len(t, runs, 1)
	run := runs[0]
	require.Equal(t, "failure", run.GetConclusion())
	require.Contains(t, run.GetOutput().GetSummary(), "the change removes 1 of 1 assignments (100.0%), more than maxRemoved 10%")
	require.Equal(t, []string{"kalypso-accept", "kalypso-full-preview"}, w.actionsOf(run), "a fork's preview shows counts and names only")

	require.NoError(t, w.sim.ClickCheckRunAction(run.GetID(), "kalypso-accept", "reader"))
	w.settle()
	run = w.previews(sample.ControlPlane, head, "dev")[0]
	require.Equal(t, "failure", run.GetConclusion())
	require.Contains(t, run.GetOutput().GetSummary(), "**Refused:** @reader cannot accept: it needs write permission")

	require.NoError(t, w.sim.ClickCheckRunAction(run.GetID(), "kalypso-accept", "lead"))
	w.settle()
	run = w.previews(sample.ControlPlane, head, "dev")[0]
	require.Equal(t, "success", run.GetConclusion())
	require.Regexp(t, `^\*\*Blast radius accepted\*\* by @lead at `, run.GetOutput().GetSummary())
	require.Equal(t, []string{"kalypso-full-preview"}, w.actionsOf(run), "accepted: only the other button stays")
	require.NoError(t, w.sim.ClosePR(sample.Owner, sample.ControlPlane, number, "mallory"))

	proposed := w.head("kalypso/dev")
	sha := w.commit(sample.ControlPlane, "dev", map[string]*string{devPolicy: nil})
	require.Equal(t, proposed, w.head("kalypso/dev"), "held: the GitOps pull request is not updated")
	check := w.check(sample.ControlPlane, sha, "dev")
	require.NotNil(t, check)
	require.Equal(t, "failure", check.GetConclusion())
	require.Equal(t, "dev: held by the blast-radius guard", check.GetOutput().GetTitle())
	require.Equal(t, []string{"kalypso-accept"}, w.actionsOf(check))

	require.NoError(t, w.sim.ClickCheckRunAction(check.GetID(), "kalypso-accept", "lead"))
	w.settle()
	require.NotEqual(t, proposed, w.head("kalypso/dev"), "accepted: the change reaches the GitOps pull request")
	for p := range w.tree("kalypso/dev") {
		require.False(t, strings.Contains(p, "observability-prometheus/"), p)
	}
	check = w.check(sample.ControlPlane, sha, "dev")
	require.Equal(t, "success", check.GetConclusion())
	require.Contains(t, check.GetOutput().GetSummary(), "**Blast radius accepted** by @lead at ")
}
