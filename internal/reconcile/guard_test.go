package reconcile

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A change over the guard's limit pushed straight to the environment branch is held out of
// the GitOps pull request until a writer accepts it on the commit's check run.
func TestGuardHoldsAPushUntilAccepted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, g, r := withSample(t, "writer", "write")
	first, err := r.Environment(ctx, sampleDev)
	require.NoError(t, err)
	s.remotes.SetHead(sampleGitOps, "dev", first.Commit) // merged
	_, err = r.Environment(ctx, sampleDev)
	require.NoError(t, err)

	guardDev(s, "maxChanged: 0")
	west := strings.Replace(s.remotes.File(samplePlane, "dev", westConfig), "mysql2", "mysql3", 1)
	sha := s.remotes.Commit(samplePlane, "dev", map[string]*string{westConfig: &west}, "tune west")

	held, err := r.Environment(ctx, sampleDev)
	require.NoError(t, err)
	require.Len(t, held.Held, 1)
	require.Empty(t, s.remotes.Head(sampleGitOps, "kalypso/dev"), "nothing is pushed")
	c := BranchCommit(1, samplePlane, "dev", sha)
	require.NoError(t, r.Report(ctx, c, held, nil))
	run := g.Runs[samplePlane][len(g.Runs[samplePlane])-1]
	require.Equal(t, "failure", run.GetConclusion())
	require.Equal(t, "dev: held by the blast-radius guard", run.GetOutput().GetTitle())
	require.Contains(t, run.GetOutput().GetSummary(), "**Blast radius:** the change changes 1 of 1 assignments (100.0%), more than maxChanged 0.")
	require.Equal(t, AcceptAction, g.Actions[run.GetID()][0].Identifier)

	a, err := r.AcceptBlastRadius(ctx, 1, samplePlane, run, "writer")
	require.NoError(t, err)
	require.True(t, a.Accepted)
	require.False(t, a.Preview)
	done, err := r.Environment(ctx, sampleDev)
	require.NoError(t, err)
	require.Empty(t, done.Held)
	require.NotEmpty(t, done.Commit, "the accepted change is pushed")
	require.Equal(t, done.Commit, s.remotes.Head(sampleGitOps, "kalypso/dev"))
	require.NoError(t, r.Report(ctx, c, done, nil))
	run, _ = g.CheckRun(ctx, samplePlane, run.GetID())
	require.Equal(t, "success", run.GetConclusion())
	require.Contains(t, run.GetOutput().GetSummary(), "**Blast radius accepted** by @writer", "the acceptance stays recorded")
	again, err := r.Environment(ctx, sampleDev)
	require.NoError(t, err)
	require.Empty(t, again.Held, "the acceptance holds for that change")
	require.Regexp(t, "for change `[0-9a-f]{12}`\\.$", again.Accepted)

	wl := "workloads/observability.yaml"
	moved := s.remotes.File(sampleWorkload, "main", wl) + "# moved\n"
	s.remotes.Commit(sampleWorkload, "main", map[string]*string{wl: &moved}, "another change")
	other, err := r.Environment(ctx, sampleDev)
	require.NoError(t, err)
	require.NotEmpty(t, other.Held, "an acceptance does not cover a change from other sources")
	require.Equal(t, done.Commit, s.remotes.Head(sampleGitOps, "kalypso/dev"))
}
