package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/fleetview"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// testClock is the file of the app's test clock (KALYPSO_TEST_CLOCK_FILE).
type testClock struct {
	t    *testing.T
	file string
}

func newTestClock(t *testing.T, now string) *testClock {
	c := &testClock{t: t, file: filepath.Join(t.TempDir(), "now")}
	c.set(now)
	return c
}

// set makes now (RFC 3339) the time the app's promoter reads.
func (c *testClock) set(now string) {
	c.t.Helper()
	require.NoError(c.t, os.WriteFile(c.file, []byte(now+"\n"), 0o600))
}

// labelledEnvironmentDoc is an Environment with labels and spec.promotion.
func labelledEnvironmentDoc(name, labels, promotion string) string {
	return strings.Replace(environmentDoc(name, promotion), "metadata:\n", "metadata:\n  labels: {"+labels+"}\n", 1)
}

// windowStatus is the latest kalypso/window status on the head of env's GitOps pull request.
func (w *world) windowStatus(env string) *github.RepoStatus {
	pr := w.appPR(env)
	if pr == nil {
		return nil
	}
	for _, st := range w.sim.Statuses(sample.Owner, sample.GitOpsRepo, pr.GetHead().GetSHA()) {
		if st.GetContext() == "kalypso/window" {
			return st
		}
	}
	return nil
}

func (w *world) waitWindowStatus(env, state, descPart string) {
	w.t.Helper()
	w.eventually(func() bool {
		st := w.windowStatus(env)
		return st != nil && st.GetState() == state && strings.Contains(st.GetDescription(), descPart)
	}, fmt.Sprintf("kalypso/window on the %s pull request is %s %q", env, state, descPart))
}

// An allow window read in Europe/Paris across the change to summer time, then an
// organisation-wide freeze, then an admin's override, all under the app's test clock.
func TestE2EPromotionWindowsUnderATestClock(t *testing.T) {
	clock := newTestClock(t, "2026-03-29T08:30:00Z") // 10:30 CEST, the day summer time starts
	w := newWorld(t)
	storeFile := filepath.Join(t.TempDir(), "hub.db")
	w.start(append(w.fleetEnv(), "KALYPSO_TEST_CLOCK_FILE="+clock.file, "KALYPSO_STORE_PATH="+storeFile)...)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "platform-admin", "admin"))
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	dev := "    timeout: 1m\n    windows:\n    - {name: mornings, kind: allow, schedule: \"0 9 * * *\", duration: 1h, timeZone: Europe/Paris}\n"
	m1 := w.commit(sample.ControlPlane, "main", map[string]*string{
		".environments/dev.yaml":   str(labelledEnvironmentDoc("dev", "tier: test", dev)),
		".environments/stage.yaml": str(labelledEnvironmentDoc("stage", "tier: production", "    after: dev\n")),
	})
	// 08:30 UTC would be 09:30 in winter time, inside the window; in summer time it is 10:30.
	w.waitStatus("dev", m1, "pending", `held: closed: outside allow window "mornings"; opens 2026-03-30 09:00 CEST`)
	require.NotEqual(t, m1, w.pinOf("dev"), "denied: nothing is pinned outside the window")
	w.waitWindowStatus("dev", "pending", `outside allow window "mornings"`)
	browser := w.signIn("lead")
	devCard := w.waitFleet(browser, "dev", "its closed window", func(e fleetview.Environment) bool { return e.Governance.Window != "" })
	require.False(t, devCard.Governance.WindowOpen)
	require.Contains(t, devCard.Governance.Window, `outside allow window "mornings"; opens 2026-03-30 09:00 CEST`)
	require.Equal(t, "mornings", devCard.Governance.Windows[0].Name)
	run := w.approvalRun(m1, "dev")
	require.NotNil(t, run)
	require.Equal(t, "Held by a promotion window", run.GetOutput().GetTitle())

	clock.set("2026-03-30T07:15:00Z") // 09:15 CEST
	w.waitStatus("dev", m1, "pending", "waiting for the GitOps pull request to be merged")
	require.Equal(t, m1, w.pinOf("dev"), "allowed: pinned once the window opened")
	w.waitWindowStatus("dev", "success", `open: allow window "mornings"`)
	require.Equal(t, "success", w.checkRun(m1, run.GetID()).GetConclusion())

	freeze := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Freeze\nmetadata:\n  name: quarter-end\nspec:\n" +
		"  schedule: \"0 9 30 3 *\"\n  duration: 48h\n  timeZone: Europe/Paris\n  environments: {matchLabels: {tier: test}}\n"
	m2 := w.commit(sample.ControlPlane, "main", map[string]*string{".environments/freezes.yaml": str(freeze)})
	w.waitStatus("dev", m2, "pending", `held: closed by deny window "freeze quarter-end"; opens 2026-04-01 09:00 CEST`)
	require.Equal(t, m1, w.pinOf("dev"), "the organisation-wide freeze holds the pin")

	var held *github.CheckRun
	w.eventually(func() bool { held = w.approvalRun(m2, "dev"); return held != nil }, "the held promotion's check run")
	require.Error(t, w.sim.ClickCheckRunAction(held.GetID(), "promote", "lead"), "an automatic promotion offers no Promote button")
	require.NoError(t, w.sim.ClickCheckRunAction(held.GetID(), "window-override", "lead"))
	w.settle()
	require.Equal(t, m1, w.pinOf("dev"), "write permission does not override a window")
	require.NoError(t, w.sim.ClickCheckRunAction(held.GetID(), "window-override", "platform-admin"))
	w.settle()
	w.waitStatus("dev", m2, "pending", "waiting for the GitOps pull request to be merged")
	require.Equal(t, m2, w.pinOf("dev"), "the admin's override pins")
	msg := w.headMessage(sample.ControlPlane, "dev")
	require.Contains(t, msg, "Kalypso-Reason: window override by @platform-admin (closed by deny window \"freeze quarter-end\"")
	require.Contains(t, msg, "Kalypso-Window-Override: @platform-admin")
	w.waitWindowStatus("dev", "success", "overridden by @platform-admin")
	require.Equal(t, "Promoted by @platform-admin, overriding the window", w.checkRun(m2, held.GetID()).GetOutput().GetTitle())

	// The same override through the API, with a reason, of main's head: the held commit it
	// passes over is superseded.
	m3 := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# hotfix\n")})
	w.waitStatus("dev", m3, "pending", `held: closed by deny window "freeze quarter-end"`)
	m4 := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# hotfix, complete\n")})
	w.waitStatus("dev", m4, "pending", `held: closed by deny window "freeze quarter-end"`)
	out, err := w.kalypsoGovern("override", "lead", "--env", "dev", "--reason", "INC-42 hotfix")
	require.Error(t, err, "write permission does not override a window")
	require.Contains(t, out, "403 Forbidden")
	_, err = w.kalypsoGovern("override", "platform-admin", "--env", "dev")
	require.Error(t, err, "a reason is required")
	out, err = w.kalypsoGovern("override", "platform-admin", "--env", "dev", "--reason", "INC-42 hotfix")
	require.NoError(t, err, out)
	require.Contains(t, out, `"commit":"`+m4+`"`)
	require.Equal(t, m4, w.pinOf("dev"), "the override request pins")
	w.waitStatus("dev", m3, "error", "superseded by "+m4[:7])
	superseded := w.approvalRun(m3, "dev")
	require.Equal(t, "Superseded by main "+m4[:7], superseded.GetOutput().GetTitle())
	require.Empty(t, w.actions(superseded), "no override offered on a superseded commit")
	msg = w.headMessage(sample.ControlPlane, "dev")
	require.Contains(t, msg, "Kalypso-Window-Override-Reason: INC-42 hotfix")
	w.waitWindowStatus("dev", "success", "overridden by @platform-admin: INC-42 hotfix")
	out, err = w.kalypsoGovern("override", "platform-admin", "--env", "dev", "--reason", "again", "--commit", m4)
	require.Error(t, err, "nothing waits any more")
	require.Contains(t, out, "409 Conflict")

	entries := w.auditEntries("lead", "&environment=dev")
	require.Equal(t, []string{
		"window-hold kalypso dev " + m1[:7],
		"pin kalypso dev " + m1[:7],
		"window-hold kalypso dev " + m2[:7],
		"refusal lead dev " + m2[:7],
		"window-override platform-admin dev " + m2[:7],
		"pin platform-admin dev " + m2[:7],
		"window-hold kalypso dev " + m3[:7],
		"window-hold kalypso dev " + m4[:7],
		"window-override platform-admin dev " + m4[:7],
		"pin platform-admin dev " + m4[:7],
	}, auditLines(entries), "every decision of dev, in order")
	require.Contains(t, entries[4].Reason, "no reason given (button); use kalypso override --reason to give one")
	require.Contains(t, entries[8].Reason, "reason: INC-42 hotfix")
	require.Contains(t, entries[0].Reason, `closed: no allow window is active, next allow window "mornings"`)
	require.Contains(t, entries[3].Reason, `window override by @lead refused: needs admin permission (has "write")`)
	require.Equal(t, m1, entries[5].Previous, "the pin records the commit it replaced")
	require.NotEmpty(t, entries[4].Delivery, "a click's decision names its webhook delivery")
	require.Equal(t, entries[3].Hash, entries[4].PrevHash, "entries are chained")

	w.stop()
	out, err = auditVerify(t, storeFile)
	require.NoError(t, err, out)
	require.Contains(t, out, "audit trail intact")
	editAudit(t, storeFile, entries[4].Seq, "platform-admin", "lead")
	out, err = auditVerify(t, storeFile)
	require.Error(t, err, "an edited record is detected")
	require.Contains(t, out, fmt.Sprintf("audit trail chain broken at entry %d", entries[4].Seq))
}
