package promote

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

const stageQuorum = "    after: dev\n    approval: manual\n    approvers: [alice, my-org/release]\n    required: 2\n"

func TestAQuorumOfDistinctApproversWhoDidNotMakeTheCommit(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageQuorum)
	w.gh.Permissions = map[string]string{"alice": "write", "bob": "write", "dave": "write", "erin": "write"}
	w.gh.Teams["my-org/release"] = []string{"bob", "erin"}
	ctx := context.Background()
	m, run := w.deployedToDev("a")
	w.gh.CommitLogins[m] = []string{"erin", "web-flow"}
	require.Equal(t, "Waiting for approval to promote to stage", run.GetOutput().GetTitle())
	require.Contains(t, run.GetOutput().GetSummary(), "- Approved by: nobody yet\n- Awaited: 2 more from alice, my-org/release")

	refused := func(user, why string) {
		t.Helper()
		require.NoError(t, w.p.Approve(ctx, 1, cp, run, user))
		require.Equal(t, w.seed, w.pin("stage"))
		after := w.gh.Runs[cp][0]
		require.Equal(t, "action_required", after.GetConclusion(), "the button stays")
		require.Contains(t, after.GetOutput().GetSummary(), why)
	}
	refused("dave", "@dave is not one of the approvers (alice, my-org/release)")
	refused("erin", "@erin made main "+m[:7]+" and cannot approve its promotion (four eyes)")

	require.NoError(t, w.p.Approve(ctx, 1, cp, run, "bob"))
	after := w.gh.Runs[cp][0]
	require.Equal(t, "1 of 2 approvals to promote to stage", after.GetOutput().GetTitle())
	require.Contains(t, after.GetOutput().GetSummary(), "- Approved by: @bob\n- Awaited: 1 more from alice, my-org/release")
	refused("bob", "@bob approved already; each approver counts once")
	require.Equal(t, []string{"bob"}, approvalsOf(w.gh.Runs[cp][0]), "a repeated click counts once")

	w.start(w.cache) // a restart (or another replica) reads the approvals from the check run
	w.gh.Permissions["alice"] = "write"
	require.NoError(t, w.p.Approve(ctx, 1, cp, run, "alice"))
	require.Equal(t, m, w.pin("stage"), "two distinct approvers promote")
	require.Contains(t, w.remotes.Message(cp, w.remotes.Head(cp, "stage")), "Kalypso-Reason: approved by @bob, @alice\n")
	after = w.gh.Runs[cp][0]
	require.Equal(t, "success", after.GetConclusion())
	require.Equal(t, "Promoted by @bob, @alice", after.GetOutput().GetTitle())

	w.merge("stage", m)
	w.settle("stage")
	deps, _, err := w.gh.Deployments(ctx, cp, &github.DeploymentsListOptions{SHA: m, Environment: "stage"})
	require.NoError(t, err)
	require.Len(t, deps, 1)
	var pl payload
	require.NoError(t, json.Unmarshal(deps[0].Payload, &pl))
	require.Equal(t, []string{"bob", "alice"}, pl.Approvers, "the Deployment records every approver")
	teamReads := 0
	for _, c := range w.gh.Methods() {
		if c == "TeamMembers" {
			teamReads++
		}
	}
	require.Equal(t, 1, teamReads, "team members are cached")
}

func TestApprovalsCountedBeforeAWindowClosesStay(t *testing.T) {
	t.Parallel()
	// The world's clock starts at 2023-11-14 22:13:20 UTC; the window is open until 23:00.
	w := newWorld(t, devAuto, stageQuorum+"    windows:\n    - {name: evenings, kind: allow, schedule: \"0 18 * * *\", duration: 5h}\n")
	w.gh.Permissions = map[string]string{"alice": "write", "bob": "write"}
	w.gh.Teams["my-org/release"] = []string{"bob"}
	ctx := context.Background()
	m, run := w.deployedToDev("a")
	require.NoError(t, w.p.Approve(ctx, 1, cp, run, "bob"))
	require.Equal(t, []string{"bob"}, approvalsOf(w.gh.Runs[cp][0]))

	w.advance(time.Hour) // 23:13: closed
	w.settle("stage")
	require.Equal(t, heldTitle, w.gh.Runs[cp][0].GetOutput().GetTitle())
	require.Equal(t, []string{"bob"}, approvalsOf(w.gh.Runs[cp][0]), "the held check run keeps the approval")
	w.advance(19 * time.Hour) // 18:13 the next day: open
	w.settle("stage")
	require.NoError(t, w.p.Approve(ctx, 1, cp, w.gh.Runs[cp][0], "alice"))
	require.Equal(t, m, w.pin("stage"), "the approval before the window closed still counts")
}
