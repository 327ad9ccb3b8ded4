package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/fleetview"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// kalypsoRollback runs `kalypso rollback` against the app as user.
func (w *world) kalypsoRollback(user string, args ...string) (string, error) {
	return w.kalypsoGovern("rollback", user, args...)
}

// kalypsoGovern runs a governance command (rollback, override) against the app as user.
func (w *world) kalypsoGovern(command, user string, args ...string) (string, error) {
	cmd := exec.Command(binary, append([]string{command, "--url", "http://" + w.addr,
		"--control-plane", sample.Owner + "/" + sample.ControlPlane}, args...)...)
	cmd.Env = append(os.Environ(), "GITHUB_TOKEN="+w.sim.UserToken(user))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// deployDev merges dev's pull request for sha and has its cluster report success.
func (w *world) deployDev(sha string) {
	w.t.Helper()
	merge := w.mergeEnvPR("dev", sha)
	require.NoError(w.t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "success", fluxCluster1, "reconciliation succeeded"))
	w.waitStatus("dev", sha, "success", "deployed to 1 cluster")
}

// Roll dev back from m2 to m1 with `kalypso rollback`, see automatic promotion held, release it.
func TestE2ERollbackThenHoldThenRelease(t *testing.T) {
	w := newWorld(t)
	storeFile := filepath.Join(t.TempDir(), "hub.db")
	w.start(append(w.fleetEnv(), "KALYPSO_STORE_PATH="+storeFile)...)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "viewer", "read"))
	m1 := w.declareChain(devOneCluster, "    after: dev\n    approval: manual\n")
	w.deployDev(m1)
	m2 := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# notes\n")})
	w.deployDev(m2)

	out, err := w.kalypsoRollback("viewer", "--environment", "dev", "--reason", "m2 breaks checkout")
	require.Error(t, err)
	require.Contains(t, out, "403 Forbidden")
	out, err = w.kalypsoRollback("lead", "--environment", "dev")
	require.Error(t, err, "a reason is required")

	out, err = w.kalypsoRollback("lead", "--environment", "dev", "--reason", "m2 breaks checkout")
	require.NoError(t, err, out)
	require.Contains(t, out, `"To":"`+m1+`"`)
	require.Equal(t, m1, w.pinOf("dev"), "the previous successful deployment is pinned back")
	w.waitStatus("dev", m1, "pending", "waiting for the GitOps pull request to be merged")
	require.Contains(t, w.headMessage(sample.ControlPlane, "dev"), "Kalypso-Reason: rollback by @lead from "+m2[:7]+": m2 breaks checkout")
	browser := w.signIn("lead")
	held := w.waitFleet(browser, "dev", "held", func(e fleetview.Environment) bool { return e.Governance.Hold != nil })
	require.Equal(t, "lead", held.Governance.Hold.By)
	require.Equal(t, "rollback: m2 breaks checkout", held.Governance.Hold.Reason)
	require.Contains(t, w.page(browser), "held by @lead since")
	resp, body := w.fleetGet("/badges/" + fleetRepo + "/dev.svg")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "<title>dev: held · ", "the badge shows the hold")
	w.requireEnvRun(m1, "dev", "neutral", "Held · ", "**dev is held** by @lead: rollback: m2 breaks checkout. dev pins main "+m1[:7]+" back")
	w.deployDev(m1) // through the usual pull request and compliance wait

	m3 := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# notes, fixed\n")})
	w.waitStatus("dev", m3, "pending", "held: the environment is held")
	require.Equal(t, m1, w.pinOf("dev"), "no automatic promotion into a held environment")
	w.requireEnvRun(m3, "dev", "neutral", "Held · ", "Main "+m3[:7]+" is not promoted to dev automatically")
	m4 := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# notes, fixed again\n")})
	w.waitStatus("dev", m4, "pending", "held: the environment is held")

	out, err = w.kalypsoRollback("lead", "--environment", "dev", "--release", "--reason", "fixed in "+m4[:7])
	require.NoError(t, err, out)
	w.waitStatus("dev", m4, "pending", "waiting for the GitOps pull request to be merged")
	require.Equal(t, m4, w.pinOf("dev"), "the release promotes main's head")
	w.waitStatus("dev", m3, "error", "superseded by "+m4[:7])
	w.requireEnvRun(m1, "dev", "success", "dev: ", "")
	w.requireEnvRun(m3, "dev", "success", "dev: ", "")
	w.eventually(func() bool { return w.envRun(m4, "dev").GetConclusion() == "success" }, "the pin of main's head takes the hold off its check run")
	w.requireEnvRun(m4, "dev", "success", "dev: ", "")
	w.waitFleet(browser, "dev", "released", func(e fleetview.Environment) bool { return e.Governance.Hold == nil })
	out, err = w.kalypsoRollback("lead", "--environment", "dev", "--release", "--reason", "again")
	require.Error(t, err)
	require.Contains(t, out, "409 Conflict")

	lines := auditLines(w.auditEntries("lead", "&environment=dev&kind=hold,rollback,release"))
	require.Equal(t, []string{"hold lead dev " + m1[:7], "rollback lead dev " + m1[:7], "release lead dev "}, lines)
	entries := w.auditEntries("lead", "&environment=dev&kind=rollback")
	require.Equal(t, m2, entries[0].Previous)
	require.Equal(t, "m2 breaks checkout", entries[0].Reason)
	w.stop()
	out, err = auditVerify(t, storeFile)
	require.NoError(t, err, out)
	require.True(t, strings.HasPrefix(out, "audit trail intact"))
}

// requireEnvRun checks the newest `Kalypso / <env>` check run of a main commit: its
// conclusion, the start of its title and, unless empty, a text of its summary (none when empty).
func (w *world) requireEnvRun(sha, env, conclusion, title, summary string) {
	w.t.Helper()
	run := w.envRun(sha, env)
	require.NotNil(w.t, run, "the check run of %s on %s", env, sha[:7])
	require.Equal(w.t, conclusion, run.GetConclusion())
	require.True(w.t, strings.HasPrefix(run.GetOutput().GetTitle(), title), run.GetOutput().GetTitle())
	if summary == "" {
		require.NotContains(w.t, run.GetOutput().GetSummary(), "is held**")
		return
	}
	require.Contains(w.t, run.GetOutput().GetSummary(), summary)
}

// envRun returns the newest `Kalypso / <env>` check run of a main commit, or nil.
func (w *world) envRun(sha, env string) *github.CheckRun {
	var run *github.CheckRun
	for _, r := range w.sim.CheckRuns(sample.Owner, sample.ControlPlane, sha) {
		if r.GetName() == "Kalypso / "+env && (run == nil || r.GetID() > run.GetID()) {
			run = r
		}
	}
	return run
}

// namedRun returns the check run of the app named name on a main commit, or nil.
func (w *world) namedRun(sha, name string) *github.CheckRun {
	for _, r := range w.sim.CheckRuns(sample.Owner, sample.ControlPlane, sha) {
		if r.GetName() == name {
			return r
		}
	}
	return nil
}

// clickRollBack presses the Roll back button of a check run as user and waits for the app.
func (w *world) clickRollBack(run *github.CheckRun, user string) {
	w.t.Helper()
	require.NoError(w.t, w.sim.ClickCheckRunAction(run.GetID(), "rollback", user))
	w.settle()
}

// The Roll back button of the latest deployment's check run rolls back and holds; the hold
// shows on a check run of the commit pinned back, and its release there too.
func TestE2ERollBackButton(t *testing.T) {
	w := newWorld(t)
	w.start("KALYPSO_PROMOTION_POLL_INTERVAL=100ms")
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "viewer", "read"))
	m1 := w.declareChain(devOneCluster, "    after: dev\n    approval: manual\n")
	w.deployDev(m1)
	m2 := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# notes\n")})
	w.deployDev(m2)
	var old, latest *github.CheckRun
	w.eventually(func() bool {
		old, latest = w.namedRun(m1, "Deployed to dev"), w.namedRun(m2, "Deployed to dev")
		return old != nil && latest != nil
	}, "each successful deployment leaves a check run with Roll back")

	w.clickRollBack(old, "lead")
	require.Equal(t, "No longer the latest deployment", w.checkRun(m1, old.GetID()).GetOutput().GetTitle())
	require.Empty(t, w.actions(w.checkRun(m1, old.GetID())), "a stale button goes away")
	w.clickRollBack(latest, "viewer")
	require.Contains(t, w.checkRun(m2, latest.GetID()).GetOutput().GetSummary(), `@viewer cannot roll back dev: it needs write permission`)
	require.Equal(t, m2, w.pinOf("dev"))

	w.clickRollBack(latest, "lead")
	w.waitStatus("dev", m1, "pending", "waiting for the GitOps pull request to be merged")
	require.Equal(t, m1, w.pinOf("dev"))
	require.Equal(t, "Rolled back by @lead", w.checkRun(m2, latest.GetID()).GetOutput().GetTitle())
	hold := w.namedRun(m1, "Hold on dev")
	require.NotNil(t, hold, "the hold shows on the check runs of the commit pinned back")
	require.Equal(t, "dev is held by @lead", hold.GetOutput().GetTitle())

	out, err := w.kalypsoRollback("lead", "--environment", "dev", "--release", "--reason", "all clear")
	require.NoError(t, err, out)
	w.eventually(func() bool { return w.checkRun(m1, hold.GetID()).GetOutput().GetTitle() == "Released" }, "the hold's check run says it was released")
	require.Contains(t, w.checkRun(m1, hold.GetID()).GetOutput().GetSummary(), "Released by @lead: all clear")
}

// `kalypso rollback --config` reverts the latest config change of an environment branch.
func TestE2EConfigRollbackRevertsAndHolds(t *testing.T) {
	w := newWorld(t)
	w.start("KALYPSO_PROMOTION_POLL_INTERVAL=100ms")
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	m1 := w.declareChain(devOneCluster, "    after: dev\n")
	w.waitStatus("dev", m1, "pending", "waiting for the GitOps pull request")
	change := w.commit(sample.ControlPlane, "dev", map[string]*string{"notes/change.md": str("scale up\n")})
	w.settle()

	out, err := w.kalypsoRollback("lead", "--environment", "dev", "--config", "--reason", "the change broke dev")
	require.NoError(t, err, out)
	require.Contains(t, out, `"From":"`+change+`"`)
	_, err = w.sim.ReadFile(sample.Owner, sample.ControlPlane, "dev", "notes/change.md")
	require.Error(t, err, "the change is reverted")
	msg := w.headMessage(sample.ControlPlane, "dev")
	require.Contains(t, msg, "This reverts commit "+change+".")
	require.Contains(t, msg, "Kalypso-Reason: rollback by @lead: the change broke dev")
	lines := auditLines(w.auditEntries("lead", "&environment=dev&kind=hold,rollback"))
	require.Equal(t, []string{"hold lead dev ", "rollback lead dev "}, lines)

	out, err = w.kalypsoRollback("lead", "--environment", "dev", "--release", "--reason", "fixed")
	require.NoError(t, err, out)
	w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# notes\n")})
	w.settle()
	out, err = w.kalypsoRollback("lead", "--environment", "dev", "--config", "--reason", "not a config change")
	require.Error(t, err, "the latest commit of dev is a pin")
	require.Contains(t, out, "409 Conflict")
}
