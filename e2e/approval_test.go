package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

const (
	devOneCluster = "    timeout: 1m\n    compliance: {minClusters: 1}\n"
	stageManual   = "    after: dev\n    approval: manual\n"
)

// deployToDev merges dev's pull request for main commit sha, has a cluster report success on
// it, and waits until dev asks for the approval to promote sha to stage.
func (w *world) deployToDev(sha string) *github.CheckRun {
	w.t.Helper()
	merge := w.mergeEnvPR("dev", sha)
	require.NoError(w.t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "success", fluxCluster1, "reconciliation succeeded"))
	w.waitStatus("dev", sha, "success", "deployed to 1 cluster")
	var run *github.CheckRun
	w.eventually(func() bool {
		run = w.approvalRun(sha, "stage")
		return run != nil
	}, "the approval check run appears on "+sha[:7])
	return run
}

// approvalRun returns the "Promote to <env>" check run on a main commit, or nil; there is at
// most one.
func (w *world) approvalRun(sha, env string) *github.CheckRun {
	w.t.Helper()
	var found []*github.CheckRun
	for _, r := range w.sim.CheckRuns(sample.Owner, sample.ControlPlane, sha) {
		if r.GetName() == "Promote to "+env {
			found = append(found, r)
		}
	}
	require.LessOrEqual(w.t, len(found), 1, "one approval check run per commit and environment")
	if len(found) == 0 {
		return nil
	}
	return found[0]
}

// click presses the Promote button of a check run as user and waits for the app.
func (w *world) click(run *github.CheckRun, user string) {
	w.t.Helper()
	require.NoError(w.t, w.sim.ClickCheckRunAction(run.GetID(), "promote", user))
	w.settle()
}

// actions returns the buttons a check run shows.
func (w *world) actions(run *github.CheckRun) []*github.CheckRunAction {
	w.t.Helper()
	_, actions, err := w.sim.CheckRunDetails(run.GetID())
	require.NoError(w.t, err)
	return actions
}

// clickDelivery returns the requested_action delivery of a click on a check run.
func (w *world) clickDelivery(runID int64) githubsim.Delivery {
	w.t.Helper()
	for _, d := range w.sim.Deliveries() {
		var ev struct {
			CheckRun struct {
				ID int64 `json:"id"`
			} `json:"check_run"`
		}
		if d.Event == "check_run" && d.Action == "requested_action" && json.Unmarshal(d.Body, &ev) == nil && ev.CheckRun.ID == runID {
			return d
		}
	}
	w.t.Fatalf("no click on check run %d", runID)
	return githubsim.Delivery{}
}

// refusals returns the app's log lines that refuse a Promote click.
func (w *world) refusals() []string {
	var out []string
	for _, line := range strings.Split(w.logs.String(), "\n") {
		if strings.Contains(line, `"promotion click refused"`) {
			out = append(out, line)
		}
	}
	return out
}

// Approve M1 into stage, then M2; a replay of M1's click never moves stage back to M1: the
// same app skips the redelivery, and an app that has not seen it (restarted, or another
// replica) refuses it because the check run no longer offers the button.
func TestE2EApprovalReplayedClickDoesNotRollBack(t *testing.T) {
	w := promotionWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	m1 := w.declareChain(devOneCluster, stageManual)
	run1 := w.deployToDev(m1)
	w.click(run1, "lead")
	w.waitStatus("stage", m1, "pending", "waiting for the GitOps pull request")
	require.Equal(t, m1, w.pinOf("stage"))
	require.Empty(t, w.actions(run1), "the used button is gone")
	require.Error(t, w.sim.ClickCheckRunAction(run1.GetID(), "promote", "lead"), "nobody can click it again")

	m2 := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# notes\n")})
	run2 := w.deployToDev(m2)
	w.click(run2, "lead")
	w.waitStatus("stage", m2, "pending", "waiting for the GitOps pull request")
	require.Equal(t, m2, w.pinOf("stage"))
	w.waitStatus("stage", m1, "error", "superseded by "+m2[:7])

	replay := w.clickDelivery(run1.GetID())
	d := w.redeliver(replay.ID)
	require.Equal(t, 200, d.StatusCode)
	require.Equal(t, m2, w.pinOf("stage"), "the replay does not roll stage back")
	require.Contains(t, w.logs.String(), skippedDelivery, "the same app skips the redelivery")

	w.stop()
	w.start("KALYPSO_PROMOTION_POLL_INTERVAL=100ms")
	refused := len(w.refusals())
	w.redeliver(replay.ID)
	require.Equal(t, m2, w.pinOf("stage"), "the replay does not roll stage back after a restart either")
	require.Len(t, w.refusals(), refused+1, "the click is refused")
	require.Contains(t, w.refusals()[refused], "no longer offers a promotion", "and the log says why")
	require.Equal(t, "Promoted by @lead", w.checkRun(m1, run1.GetID()).GetOutput().GetTitle(), "the used check run keeps its record")
	require.Contains(t, w.headMessage(sample.ControlPlane, "stage"), "Kalypso-Promoted: "+m2, "no pin commit after m2's")
}

// After a successful promotion the button is gone; a button left on an older commit, or
// clicked for a commit older than what stage pins, is refused with the reason on its check
// run, and loses its button.
func TestE2EApprovalOfAnOlderCommitIsRefused(t *testing.T) {
	w := promotionWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	m1 := w.declareChain(devOneCluster, stageManual)
	run1 := w.deployToDev(m1)
	require.Len(t, w.actions(run1), 1, "m1 can be promoted")
	m2 := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# notes\n")})
	run2 := w.deployToDev(m2)

	w.click(run2, "lead")
	w.waitStatus("stage", m2, "pending", "waiting for the GitOps pull request")
	got := w.checkRun(m2, run2.GetID())
	require.Equal(t, "success", got.GetConclusion())
	require.Equal(t, "Promoted by @lead", got.GetOutput().GetTitle())
	require.Empty(t, w.actions(run2), "no Promote button after the promotion")

	w.click(run1, "lead")
	require.Equal(t, m2, w.pinOf("stage"), "stage never moves back to an ancestor")
	got = w.checkRun(m1, run1.GetID())
	require.Equal(t, "neutral", got.GetConclusion())
	require.Equal(t, "Promotion refused", got.GetOutput().GetTitle())
	require.Contains(t, got.GetOutput().GetSummary(), "is an ancestor of "+m2[:7]+", which stage pins")
	require.Empty(t, w.actions(run1), "the stale button is gone")
	require.Nil(t, w.mainStatus("stage", m1), "m1 never went to stage")
}

// Replayed pushes, with the same delivery ID and with new ones, leave one check run per
// commit and environment.
func TestE2EReplayedPushesCreateOneCheckRun(t *testing.T) {
	w := newWorld(t)
	w.start()
	sha := w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Replayed"))})
	require.Len(t, w.checks(sample.ControlPlane, sha, "dev"), 1)
	head, pr := w.head("kalypso/dev"), w.appPR("dev")

	w.replay(w.pushDelivery(sha), 100, 100)
	require.Len(t, w.checks(sample.ControlPlane, sha, "dev"), 1, "one check run on the commit")
	require.Equal(t, "success", w.check(sample.ControlPlane, sha, "dev").GetConclusion())
	require.Equal(t, head, w.head("kalypso/dev"), "no commit")
	require.Len(t, w.prsOf("kalypso/dev"), 1)
	require.Equal(t, pr.GetNumber(), w.appPR("dev").GetNumber())

	main := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# notes\n")})
	w.replay(w.pushDelivery(main), 10, 20)
	for _, env := range []string{"dev", "stage"} {
		require.Len(t, w.checks(sample.ControlPlane, main, env), 1, "one validation of main per environment")
	}
}

// replay sends a delivery again `same` times with its own ID and `fresh` times with new IDs,
// and waits until the app has taken each.
func (w *world) replay(d githubsim.Delivery, same, fresh int) {
	w.t.Helper()
	for range same {
		got, err := w.sim.Redeliver(d.ID)
		require.NoError(w.t, err)
		require.Equal(w.t, 200, got.StatusCode)
		w.redelivered[d.ID]++
	}
	ids := make([]string, fresh)
	for i := range ids {
		ids[i] = w.resend(d)
	}
	w.settle()
	w.eventually(func() bool {
		done := w.processed()
		for _, id := range ids {
			if done[id] == 0 {
				return false
			}
		}
		return true
	}, "the app processes every replay with a new delivery ID")
}

// resend posts the bytes and headers of a delivery again under a new delivery ID, as a replay
// of the same event would come, and returns the ID; it retries while the app's queue is full.
func (w *world) resend(d githubsim.Delivery) string {
	w.t.Helper()
	id := rand.Text()
	for {
		req, err := http.NewRequest(http.MethodPost, "http://"+w.addr+"/api/github/hook", bytes.NewReader(d.Body))
		require.NoError(w.t, err)
		req.Header = d.Header.Clone()
		req.Header.Set("X-GitHub-Delivery", id)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(w.t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			require.Equal(w.t, http.StatusOK, resp.StatusCode)
			return id
		}
		time.Sleep(50 * time.Millisecond)
	}
}
