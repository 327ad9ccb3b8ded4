package promote

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// deployedToDev promotes a new main commit to dev and marks it deployed there; stage asks
// for approval. It returns the commit and the approval check run.
func (w *world) deployedToDev(file string) (string, *github.CheckRun) {
	w.t.Helper()
	ctx := context.Background()
	m := w.main(file)
	require.NoError(w.t, w.p.PromoteMain(ctx, w.loc("", m)))
	require.NoError(w.t, w.p.status(ctx, w.loc("dev", m), "success", "deployed to 1 cluster"))
	require.NoError(w.t, w.p.askApproval(ctx, w.loc("stage", m), w.stage("stage")))
	run, err := ghport.FindCheckRun(ctx, w.gh, cp, m, ApprovalCheckName("stage"), approvalID(w.loc("stage", m)))
	require.NoError(w.t, err)
	require.NotNil(w.t, run)
	return m, run
}

func TestAskApprovalOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageManual)
	m, run := w.deployedToDev("a")
	require.Equal(t, "action_required", run.GetConclusion())
	require.Equal(t, "Waiting for approval to promote to stage", run.GetOutput().GetTitle())
	require.Equal(t, PromoteAction, w.gh.Actions[run.GetID()][0].Identifier)
	require.NoError(t, w.p.askApproval(context.Background(), w.loc("stage", m), w.stage("stage")))
	require.Len(t, w.gh.Runs[cp], 1, "whatever became of it")
}

func TestApprove(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		setup      func(w *world, m string, run *github.CheckRun) // after the approval was asked for
		user       string
		promoted   bool
		conclusion string // of the approval check run afterwards
		title      string
		summaryHas string
		buttons    int
	}{
		"promotes": {func(*world, string, *github.CheckRun) {}, "alice", true, "success", "Promoted by @alice", "@alice promoted main", 0},
		"needs write permission": {func(*world, string, *github.CheckRun) {}, "bob", false, "action_required", "Promotion refused",
			`it needs write permission on microsoft/kalypso-control-plane (has "read")`, 1},
		"a replay of a used button": {func(w *world, _ string, run *github.CheckRun) {
			w.gh.Runs[cp][0].Conclusion = github.String("success")
		}, "alice", false, "success", "Waiting for approval to promote to stage", "", 1},
		"not deployed upstream": {func(w *world, m string, _ *github.CheckRun) {
			require.NoError(t, w.p.status(context.Background(), w.loc("dev", m), "failure", "cluster x failed"))
		}, "alice", false, "neutral", "Promotion refused", ErrNotCandidate.Error(), 0},
		"a newer commit is deployed upstream": {func(w *world, _ string, _ *github.CheckRun) {
			m2 := w.main("b")
			require.NoError(t, w.p.PromoteMain(context.Background(), w.loc("", m2)))
			require.NoError(t, w.p.status(context.Background(), w.loc("dev", m2), "success", "deployed"))
		}, "alice", false, "neutral", "Promotion refused", ErrNewerCandidate.Error(), 0},
		"already pinned": {func(w *world, m string, _ *github.CheckRun) {
			require.NoError(t, w.p.Pin(context.Background(), w.loc("stage", m), w.stage("stage"), "by hand"))
		}, "alice", true, "neutral", "Promotion refused", ErrAlreadyPinned.Error(), 0},
		"no longer declared": {func(w *world, _ string, _ *github.CheckRun) {
			w.remotes.Commit(cp, "main", map[string]*string{".environments/stage.yaml": nil}, "Drop stage")
		}, "alice", false, "neutral", "Nothing to promote", "stage no longer declares spec.promotion", 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, devAuto, stageManual)
			w.gh.Permissions = map[string]string{"alice": "write", "bob": "read"}
			m, run := w.deployedToDev("a")
			tc.setup(w, m, run)
			require.NoError(t, w.p.Approve(context.Background(), 1, cp, run, tc.user))
			require.Equal(t, tc.promoted, w.pin("stage") == m, "stage pins the commit")
			after := w.gh.Runs[cp][0]
			require.Equal(t, tc.conclusion, after.GetConclusion())
			require.Equal(t, tc.title, after.GetOutput().GetTitle())
			require.Contains(t, after.GetOutput().GetSummary(), tc.summaryHas)
			require.Len(t, w.gh.Actions[run.GetID()], tc.buttons)
		})
	}
}

func TestApproveIgnoresOtherCheckRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageManual)
	ctx := context.Background()
	other := &github.CheckRun{ID: github.Int64(1), ExternalID: github.String("kalypso:microsoft/kalypso-control-plane:dev")}
	require.NoError(t, w.p.Approve(ctx, 1, cp, other, "alice"))
	elsewhere := &github.CheckRun{ID: github.Int64(1), ExternalID: github.String(approvalID(w.loc("stage", w.seed)))}
	require.NoError(t, w.p.Approve(ctx, 1, envref.Repo{Owner: "o", Name: "x"}, elsewhere, "alice"))
	require.Empty(t, w.gh.Calls())

	boom := errors.New("boom")
	w.gh.Fail("CheckRun", boom)
	require.ErrorIs(t, w.p.Approve(ctx, 1, cp, elsewhere, "alice"), boom)
	_, run := w.deployedToDev("a")
	w.gh.Permissions["alice"] = "admin"
	w.gh.Fail("Permission", boom)
	require.ErrorIs(t, w.p.Approve(ctx, 1, cp, run, "alice"), boom)
	w.gh.Fail("CompleteCheckRun", boom)
	require.ErrorIs(t, w.p.Approve(ctx, 1, cp, run, "alice"), boom)
}

// The approval check run could not be created (one 502): the next step of stage's promotion,
// from a retry or the resync, asks for it again, for the newest commit deployed upstream.
func TestAMissingPromoteButtonIsAskedForAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageManual)
	ctx := context.Background()
	m := w.pinnedToDev("a")
	require.NoError(t, w.p.status(ctx, w.loc("dev", m), "success", "deployed to 1 cluster"))
	boom := errors.New("502 Bad Gateway")
	w.gh.Fail("CreateCheckRun", boom)
	_, err := w.p.Converge(ctx, info("stage"))
	require.ErrorIs(t, err, boom)
	require.Empty(t, w.gh.Runs[cp])
	again, err := w.p.Converge(ctx, info("stage"))
	require.NoError(t, err)
	require.Zero(t, again)
	run, err := ghport.FindCheckRun(ctx, w.gh, cp, m, ApprovalCheckName("stage"), approvalID(w.loc("stage", m)))
	require.NoError(t, err)
	require.NotNil(t, run, "the Promote button is there")
	require.Equal(t, PromoteAction, w.gh.Actions[run.GetID()][0].Identifier)
	_, err = w.p.Converge(ctx, info("stage"))
	require.NoError(t, err)
	require.Len(t, w.gh.Runs[cp], 1, "asked once")
}
