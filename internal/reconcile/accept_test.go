package reconcile

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/preview"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// heldOutcome is dev held by the guard, computed from dev's commit c1 and a workload commit.
func heldOutcome(workloadCommit string) *Outcome {
	out := outcome(1)
	out.Held = []preview.Violation{{What: "removed", Measured: 1, Total: 1}}
	out.Sources = []scheduling.SourceCommit{{Name: "dev", Commit: "c1"}, {Name: "workload svc", Repo: "https://github.com/team/svc", Commit: workloadCommit}}
	return out
}

// A click names the change its user was shown: replayed after a later change was held on the
// same commit, it is refused; a click on the change held counts once; the acceptance stays on
// the check run when it is rewritten for a later change.
func TestAcceptanceNamesTheChangeShown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, g := withFake()
	g.Permissions["writer"] = "write"
	c := BranchCommit(7, plane, "dev", "c1")
	first := heldOutcome("w1")
	require.NoError(t, r.Report(ctx, c, first, nil))
	shown, _ := g.CheckRun(ctx, plane, g.Runs[plane][0].GetID())
	require.Contains(t, shown.GetOutput().GetSummary(), "**Held change** `"+changeDigest(first)+"`")

	later := heldOutcome("w2")
	require.NoError(t, r.Report(ctx, c, later, nil))
	a, err := r.AcceptBlastRadius(ctx, 7, plane, shown, "writer")
	require.NoError(t, err)
	require.False(t, a.Accepted)
	require.Equal(t, "the click of @writer names change `"+changeDigest(first)+"`, but the change held now is `"+changeDigest(later)+"`: only a click on the change shown counts", a.Refusal)
	now, _ := g.CheckRun(ctx, plane, shown.GetID())
	require.Equal(t, "failure", now.GetConclusion())
	require.True(t, strings.HasPrefix(now.GetOutput().GetSummary(), "**Refused:** the click of @writer names change"))
	require.Equal(t, acceptButton(), g.Actions[shown.GetID()], "the button stays")
	require.Zero(t, g.Count("Permission"), "refused before anything else is asked")

	unnamed := &github.CheckRun{ID: shown.ID, ExternalID: shown.ExternalID, Output: &github.CheckRunOutput{Summary: github.String("no digest")}}
	a, err = r.AcceptBlastRadius(ctx, 7, plane, unnamed, "writer")
	require.NoError(t, err)
	require.Contains(t, a.Refusal, "names change `none`")

	a, err = r.AcceptBlastRadius(ctx, 7, plane, now, "writer")
	require.NoError(t, err)
	require.True(t, a.Accepted)
	accepted, _ := g.CheckRun(ctx, plane, shown.GetID())
	require.Regexp(t, "^\\*\\*Blast radius accepted\\*\\* by @writer at [0-9TZ:-]+ for change `"+changeDigest(later)+"`\\.\n\n", accepted.GetOutput().GetSummary())
	require.Empty(t, g.Actions[shown.GetID()])

	a, err = r.AcceptBlastRadius(ctx, 7, plane, now, "writer")
	require.NoError(t, err)
	require.False(t, a.Accepted, "a replay of a used click")
	require.Equal(t, "nothing to accept: the check run does not offer it (any more)", a.Refusal)

	third := heldOutcome("w3")
	require.NoError(t, r.Report(ctx, c, third, nil))
	rewritten, _ := g.CheckRun(ctx, plane, shown.GetID())
	require.Contains(t, rewritten.GetOutput().GetSummary(), "for change `"+changeDigest(later)+"`.", "the record stays on the check run")
	require.True(t, offersAccept(rewritten), "the later change is held")
	require.Equal(t, acceptButton(), g.Actions[shown.GetID()])
	a, err = r.AcceptBlastRadius(ctx, 7, plane, now, "writer")
	require.NoError(t, err)
	require.False(t, a.Accepted, "the used click does not accept the change held after it")
}

// An acceptance recorded on a preview holds for its base and change only: the same head
// commit previewed into another base, or with another change, is held again.
func TestAcceptanceBelongsToOneBaseAndChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, g, r := withSample(t, "writer", "write")
	guardDev(s, "maxChanged: 0")
	west := s.remotes.File(samplePlane, "dev", westConfig)
	intoDev := openPull(t, s, map[string]*string{westConfig: str(strings.Replace(west, "mysql2", "mysql3", 1))})
	p, err := r.Preview(ctx, sampleDev, intoDev, AsEnvironmentBranch)
	require.NoError(t, err)
	run, err := r.ReportPreview(ctx, intoDev, sampleDev, p, nil)
	require.NoError(t, err)
	a, err := r.AcceptBlastRadius(ctx, 1, samplePlane, run, "writer")
	require.NoError(t, err)
	require.True(t, a.Accepted)

	intoMain := intoDev
	intoMain.Number, intoMain.Base = 2, "main"
	held, err := r.ReportPreview(ctx, intoMain, sampleDev, p, nil)
	require.NoError(t, err)
	require.Equal(t, run.GetID(), held.GetID(), "one check run per head commit and environment")
	require.Equal(t, "failure", held.GetConclusion(), "the acceptance of the pull request into dev does not hold into main")
	require.Equal(t, acceptButton(), g.Actions[run.GetID()])
	require.Contains(t, held.GetOutput().GetSummary(), "**Blast radius accepted** by @writer", "the record stays")

	again, err := r.ReportPreview(ctx, intoDev, sampleDev, p, nil)
	require.NoError(t, err)
	require.Equal(t, "success", again.GetConclusion(), "it still holds for its own base and change")
	require.Empty(t, g.Actions[run.GetID()])

	other := openPull(t, s, map[string]*string{westConfig: str(strings.Replace(west, "mysql2", "mysql4", 1))})
	p2, err := r.Preview(ctx, sampleDev, other, AsEnvironmentBranch)
	require.NoError(t, err)
	changed, err := r.ReportPreview(ctx, intoDev, sampleDev, p2, nil)
	require.NoError(t, err)
	require.Equal(t, "failure", changed.GetConclusion(), "another change into the same base is held again")
}
