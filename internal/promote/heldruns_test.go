package promote

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envcheck"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// validated posts the `Kalypso / <env>` check run of a main commit as the reconciler reports
// a valid commit.
func (w *world) validated(env, sha string) {
	w.t.Helper()
	_, err := w.gh.CreateCheckRun(context.Background(), cp, github.CreateCheckRunOptions{Name: envcheck.Name(env), HeadSHA: sha,
		ExternalID: github.String(envcheck.ExternalID(cp, env)), Status: github.String("completed"), Conclusion: github.String("success"),
		Output: &github.CheckRunOutput{Title: github.String(env + ": 1 assignment"), Summary: github.String("valid in " + env)}})
	require.NoError(w.t, err)
}

// envRun is the `Kalypso / <env>` check run of a main commit as the fake has it now.
func (w *world) envRun(env, sha string) envcheck.Content {
	w.t.Helper()
	run, err := ghport.FindCheckRun(context.Background(), w.gh, cp, sha, envcheck.Name(env), envcheck.ExternalID(cp, env))
	require.NoError(w.t, err)
	require.NotNil(w.t, run)
	return envcheck.Content{Conclusion: run.GetConclusion(), Title: run.GetOutput().GetTitle(), Summary: run.GetOutput().GetSummary()}
}

// push makes a main commit the reconciler found valid in every environment and hands it to
// the promoter, as a push to main does.
func (w *world) push(file string) string {
	w.t.Helper()
	m := w.main(file)
	w.validated("dev", m)
	w.validated("stage", m)
	require.NoError(w.t, w.p.PromoteMain(context.Background(), w.loc("", m)))
	return m
}

// TestAHoldShowsOnTheEnvironmentCheckRuns checks that a hold shows on the `Kalypso / <env>`
// check runs of the commit it pins back and of the main commits it keeps out, as neutral, and
// that the release and the pin past them take it away.
func TestAHoldShowsOnTheEnvironmentCheckRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageAuto)
	w.withHolds()
	ctx := context.Background()
	m1 := w.push("a")
	w.deployed("dev", m1)
	m2 := w.push("b")
	valid := w.envRun("dev", m1)
	require.Equal(t, "success", valid.Conclusion)

	_, err := w.p.RollBack(ctx, info("dev").Env, "alice", "m2 breaks checkout")
	require.NoError(t, err)
	at := w.envRun("dev", m1)
	require.Equal(t, envcheck.HeldConclusion, at.Conclusion, "as the Hold on dev check run")
	require.Equal(t, envcheck.TitlePrefix+"dev: 1 assignment", at.Title)
	paragraph, held := envcheck.HoldOf(at.Summary)
	require.True(t, held)
	require.Equal(t, "**dev is held** by @alice: rollback: m2 breaks checkout. dev pins main "+m1[:7]+" back, and keeps it until the release. "+
		"No automatic promotion goes into or out of dev until a user with write permission releases it (`kalypso rollback --release --reason …`, or `POST /api/v1/release`).", paragraph)
	require.Equal(t, "success", w.envRun("stage", m1).Conclusion, "stage is not held")
	require.Equal(t, "success", w.envRun("dev", m2).Conclusion)

	m3 := w.push("c")
	m4 := w.push("d")
	for _, m := range []string{m3, m4} {
		out := w.envRun("dev", m)
		require.Equal(t, envcheck.HeldConclusion, out.Conclusion)
		require.Contains(t, out.Summary, "Main "+m[:7]+" is not promoted to dev automatically; a release promotes main's newest commit.")
	}
	w.gh.Reset()
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m4)))
	require.Zero(t, w.gh.Count("UpdateCheckRun"), "a hold shown already is not written again")

	_, err = w.p.Release(ctx, info("dev").Env, "bob", "fixed in m4")
	require.NoError(t, err)
	require.Equal(t, valid, w.envRun("dev", m1), "the release takes the hold away")
	w.settle("dev")
	require.Equal(t, m4, w.pin("dev"))
	require.Equal(t, "success", w.envRun("dev", m4).Conclusion, "pinned: no longer held")
	require.Equal(t, "success", w.envRun("dev", m3).Conclusion, "passed over: no longer held")
	state, desc := w.status("dev", m3)
	require.Equal(t, "error", state)
	require.Equal(t, "superseded by "+m4[:7], desc)
}

// TestAWindowHeldCommitIsSupersededByANewerPin checks that an older main commit held by a
// window gets a final status naming the newer commit pinned past it, and that its "Promote to
// <env>" check run no longer offers the override.
func TestAWindowHeldCommitIsSupersededByANewerPin(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devDenyTonight, stageAuto)
	ctx := context.Background()
	m1 := w.main("a")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m1)))
	m2 := w.main("b")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m2)))
	for _, m := range []string{m1, m2} {
		state, desc := w.status("dev", m)
		require.Equal(t, "pending", state)
		require.Contains(t, desc, "held: ")
	}

	w.advance(2 * time.Hour)
	w.settle("dev")
	require.Equal(t, m2, w.pin("dev"), "main's head is pinned when the window opens")
	state, desc := w.status("dev", m1)
	require.Equal(t, "error", state, "a final status")
	require.Equal(t, "superseded by "+m2[:7], desc)
	run := w.approvalRun("dev", m1)
	require.Equal(t, "neutral", run.GetConclusion())
	require.Equal(t, "Superseded by main "+m2[:7], run.GetOutput().GetTitle())
	require.Empty(t, w.gh.Actions[run.GetID()], "no override offered any more")
	state, _ = w.status("dev", m2)
	require.Equal(t, "pending", state)
	require.Equal(t, "completed", w.approvalRun("dev", m2).GetStatus())
}

// TestPassedOverIsBounded checks that a pin looks at no more than MaxPassedOver commits.
func TestPassedOverIsBounded(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageAuto)
	require.NoError(t, w.p.PromoteMain(context.Background(), w.loc("", w.main("a"))))
	for i := range MaxPassedOver + 5 {
		w.main(string(rune('b'+i%20)) + time.Duration(i).String())
	}
	head := w.main("last")
	w.gh.Reset()
	require.NoError(t, w.p.PromoteMain(context.Background(), w.loc("", head)))
	require.Equal(t, head, w.pin("dev"))
	require.Equal(t, 1+MaxPassedOver, w.gh.Count("Statuses"), "the old pin, then the newest commits passed over")
}
