package promote

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/store"
)

// The world's clock starts at 2023-11-14 22:13:20 UTC, a Tuesday.
const (
	devDenyTonight  = "    timeout: 1m\n    windows:\n    - {name: nightly, kind: deny, schedule: \"0 22 * * *\", duration: 2h}\n"
	stageManualDays = "    after: dev\n    approval: manual\n    windows:\n    - {name: days, kind: allow, schedule: \"0 8 * * *\", duration: 10h, timeZone: Europe/Paris}\n"
)

// heldRun returns the "Promote to <env>" check run of a main commit, or nil.
func (w *world) approvalRun(env, sha string) *github.CheckRun {
	w.t.Helper()
	run, err := ghport.FindCheckRun(context.Background(), w.gh, cp, sha, ApprovalCheckName(env), approvalID(w.loc(env, sha)))
	require.NoError(w.t, err)
	return run
}

// openPR opens the app's pull request of env on the GitOps repository, its head at sha.
func (w *world) openPR(env, sha string) {
	w.t.Helper()
	pr, err := w.gh.CreatePullRequest(context.Background(), gitopsRepo, &github.NewPullRequest{Head: github.String(envref.AppBranch(env)), Base: github.String(env)})
	require.NoError(w.t, err)
	w.gh.Pulls[gitopsRepo][0].Head.SHA = github.String(sha)
	require.Equal(w.t, pr.GetNumber(), w.gh.Pulls[gitopsRepo][0].GetNumber())
}

// windowStatus is the latest kalypso/window status of a GitOps commit.
func (w *world) windowStatus(sha string) (state, desc string) {
	for _, st := range w.gh.Latest(gitopsRepo, sha) {
		if st.GetContext() == WindowContext {
			return st.GetState(), st.GetDescription()
		}
	}
	return "", ""
}

func TestADenyWindowHoldsTheAutomaticPinUntilItEnds(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devDenyTonight, stageAuto)
	ctx := context.Background()
	m := w.main("a")
	w.openPR("dev", "cafe01")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m)))
	require.Equal(t, w.seed, w.pin("dev"), "no pin inside the deny window")
	state, desc := w.status("dev", m)
	require.Equal(t, "pending", state)
	require.Equal(t, `held: closed by deny window "nightly"; opens 2023-11-15 00:00 UTC`, desc)
	run := w.approvalRun("dev", m)
	require.NotNil(t, run)
	require.Equal(t, heldTitle, run.GetOutput().GetTitle())
	require.Contains(t, run.GetOutput().GetSummary(), `closed by deny window "nightly" (0 22 * * * for 2h, UTC); opens 2023-11-15 00:00 UTC`)
	require.Equal(t, []string{OverrideAction}, identifiers(w.gh.Actions[run.GetID()]), "an automatic promotion offers only the override")
	require.Equal(t, []string{"dev"}, w.sched.takeDue(), "the held promotion looks again")

	again, err := w.p.Converge(ctx, info("dev"))
	require.NoError(t, err)
	require.Equal(t, 106*time.Minute+40*time.Second, again, "it looks again when the window ends")
	state, desc = w.windowStatus("cafe01")
	require.Equal(t, "pending", state, "the pull request is held too")
	require.Contains(t, desc, `closed by deny window "nightly"`)

	w.advance(2 * time.Hour)
	w.settle("dev")
	require.Equal(t, m, w.pin("dev"), "pinned once the window ended")
	state, desc = w.status("dev", m)
	require.Equal(t, "pending", state)
	require.Equal(t, descAwaitMerge, desc)
	require.Contains(t, w.remotes.Message(cp, w.remotes.Head(cp, "dev")), "Kalypso-Reason: push to main\n", "no window decided: none is named")
	require.Equal(t, "success", w.approvalRun("dev", m).GetConclusion())
	state, desc = w.windowStatus("cafe01")
	require.Equal(t, "success", state)
	require.Equal(t, "no promotion window applies", desc)
}

func TestAnAdminOverridesAClosedWindow(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devDenyTonight, stageAuto)
	w.gh.Permissions = map[string]string{"alice": "write", "carol": "admin"}
	trail := &memTrail{}
	w.start(w.cache, WithAudit(trail))
	ctx := context.Background()
	m := w.main("a")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m)))
	run := w.approvalRun("dev", m)

	require.NoError(t, w.p.Approve(ctx, 1, cp, run, "alice"))
	require.Equal(t, w.seed, w.pin("dev"), "an automatic promotion's run offers no Promote")
	require.NoError(t, w.p.Override(ctx, 1, cp, run, "alice"))
	require.Equal(t, w.seed, w.pin("dev"), "write permission does not override")

	require.NoError(t, w.p.Override(ctx, 1, cp, run, "carol"))
	require.Equal(t, m, w.pin("dev"))
	msg := w.remotes.Message(cp, w.remotes.Head(cp, "dev"))
	require.Contains(t, msg, `Kalypso-Reason: window override by @carol (closed by deny window "nightly"; opens 2023-11-15 00:00 UTC)`)
	require.Contains(t, msg, "\nKalypso-Window-Override: @carol\n")
	after := w.approvalRun("dev", m)
	require.Equal(t, "success", after.GetConclusion())
	require.Equal(t, "Promoted by @carol, overriding the window", after.GetOutput().GetTitle())

	w.openPR("dev", "cafe02")
	_, err := w.p.Converge(ctx, info("dev"))
	require.NoError(t, err)
	state, desc := w.windowStatus("cafe02")
	require.Equal(t, "success", state, "the overridden pin may be merged")
	require.Contains(t, desc, `overridden by @carol; closed by deny window "nightly"`)
	require.Equal(t, []string{
		"window-hold kalypso dev " + m[:7] + ` closed by deny window "nightly" (0 22 * * * for 2h, UTC); opens 2023-11-15 00:00 UTC`,
		"refusal alice dev " + m[:7] + " main " + m[:7] + " to dev: this check run no longer offers a promotion",
		"refusal alice dev " + m[:7] + ` window override by @alice refused: needs admin permission (has "write")`,
		"window-override carol dev " + m[:7] + ` closed by deny window "nightly" (0 22 * * * for 2h, UTC); opens 2023-11-15 00:00 UTC; ` + noReason,
		"pin carol dev " + m[:7] + ` window override by @carol (closed by deny window "nightly"; opens 2023-11-15 00:00 UTC)`,
	}, trail.lines(), "every decision is recorded, with who and why")
}

// memTrail is an audit trail in memory.
type memTrail struct {
	mu      sync.Mutex
	entries []store.AuditEntry
}

func (m *memTrail) AppendAudit(_ context.Context, kind, subject, body string) (store.AuditEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := store.AuditEntry{Seq: int64(len(m.entries) + 1), Kind: kind, Subject: subject, Body: body}
	m.entries = append(m.entries, e)
	return e, nil
}

// lines are the entries as "kind actor environment commit reason".
func (m *memTrail) lines() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, e := range m.entries {
		var r audit.Record
		_ = json.Unmarshal([]byte(e.Body), &r)
		out = append(out, strings.Join([]string{e.Kind, r.Actor, r.Environment, short(r.Commit), r.Reason}, " "))
	}
	return out
}

func TestAClosedAllowWindowHoldsAnApproval(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageManualDays)
	w.gh.Permissions = map[string]string{"alice": "write"}
	ctx := context.Background()
	m := w.main("a")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m)))
	require.NoError(t, w.p.status(ctx, w.loc("dev", m), "success", "deployed to 1 cluster"))
	w.settle("stage")
	run := w.approvalRun("stage", m)
	require.NotNil(t, run)
	require.Equal(t, heldTitle, run.GetOutput().GetTitle())
	actions := w.gh.Actions[run.GetID()]
	require.Equal(t, []string{PromoteAction, OverrideAction}, identifiers(actions))
	require.Equal(t, "Window opens 2023-11-15 08:00 CET", actions[0].Description, "the button says when the window opens")
	state, _ := w.status("stage", m)
	require.Empty(t, state, "an approval is not marked held on main")

	require.NoError(t, w.p.Approve(ctx, 1, cp, run, "alice"))
	require.Equal(t, w.seed, w.pin("stage"), "a click outside the window does not promote")
	require.Equal(t, "action_required", w.approvalRun("stage", m).GetConclusion(), "and keeps its buttons")

	w.advance(9*time.Hour + 47*time.Minute) // 2023-11-15 08:00 UTC = 09:00 CET
	w.settle("stage")
	run = w.approvalRun("stage", m)
	require.Equal(t, "Waiting for approval to promote to stage", run.GetOutput().GetTitle())
	require.NoError(t, w.p.Approve(ctx, 1, cp, run, "alice"))
	require.Equal(t, m, w.pin("stage"))
	require.Contains(t, w.remotes.Message(cp, w.remotes.Head(cp, "stage")), `Kalypso-Reason: approved by @alice; window open: allow window "days"`)
}

func identifiers(actions []*github.CheckRunAction) []string {
	var out []string
	for _, a := range actions {
		out = append(out, a.Identifier)
	}
	return out
}
