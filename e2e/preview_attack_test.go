package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// everything returns all a user can see of the preview check runs of a commit: titles,
// summaries, texts and annotations.
func (w *world) everything(repo, sha string) string {
	w.t.Helper()
	var b strings.Builder
	for _, run := range w.sim.CheckRuns(sample.Owner, repo, sha) {
		out := run.GetOutput()
		fmt.Fprintf(&b, "%s\n%s\n%s\n%s\n", run.GetName(), out.GetTitle(), out.GetSummary(), out.GetText())
		anns, _, err := w.sim.CheckRunDetails(run.GetID())
		require.NoError(w.t, err)
		for _, a := range anns {
			fmt.Fprintf(&b, "%s:%d %s %s\n", a.GetPath(), a.GetStartLine(), a.GetTitle(), a.GetMessage())
		}
	}
	return b.String()
}

// commentsText joins the bodies of a pull request's comments.
func (w *world) commentsText(repo string, number int) string {
	var b strings.Builder
	for _, c := range w.sim.Comments(sample.Owner, repo, number) {
		b.WriteString(c.GetBody() + "\n")
	}
	return b.String()
}

// replayAs sends a recorded delivery again as an attacker holding it would: the same body,
// signed (the signature covers the body only), under a new delivery ID. It waits until the app
// has processed it.
func (w *world) replayAs(d githubsim.Delivery) {
	w.t.Helper()
	id := fmt.Sprintf("replayed-%d", time.Now().UnixNano())
	req, err := http.NewRequest(http.MethodPost, "http://"+w.addr+"/api/github/hook", bytes.NewReader(d.Body))
	require.NoError(w.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", d.Event)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", githubsim.Sign(secret, d.Body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(w.t, err)
	resp.Body.Close()
	require.Equal(w.t, http.StatusOK, resp.StatusCode)
	w.eventually(func() bool { return w.processed()[id] > 0 }, "the app processes the replayed delivery")
}

// lastClick returns the newest delivery of a click on a check run's button.
func (w *world) lastClick(identifier string) githubsim.Delivery {
	w.t.Helper()
	ds := w.sim.Deliveries()
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i].Event == "check_run" && ds[i].Action == "requested_action" && bytes.Contains(ds[i].Body, []byte(`"identifier":"`+identifier+`"`)) {
			return ds[i]
		}
	}
	w.t.Fatalf("no click on %s was delivered", identifier)
	return githubsim.Delivery{}
}

const privateRepo = "ledger-private"

// A read-only user's pull request into main registers a private repository of the
// installation: the preview reads nothing of it (the base does not register it), and nothing
// of it appears in the check runs, the comment or the app's logs. A writer's pull request
// doing the same reads nothing of it either.
func TestE2EPreviewNeverReadsARepositoryThePullRequestRegisters(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, w.sim.CreateRepo(w.seeded.Installation, sample.Owner, privateRepo, "main"))
	secretWorkload := `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: ledger-topsecret
  labels:
    stack: observability
spec:
  deploymentTargets:
    - name: vaultsync-classified
      environment: dev
      manifests:
        repo: https://github.com/microsoft/ledger-private-gitops
        branch: dev
        path: ./classified-payroll
`
	_, err := w.sim.CommitFiles(sample.Owner, privateRepo, "main", map[string]*string{"workloads/ledger.yaml": &secretWorkload}, "private")
	require.NoError(t, err)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "reader", "read"))
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	w.start("KALYPSO_CACHE_DIR="+w.cache, "KALYPSO_LOG_LEVEL=info")
	registration := `apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata:
  name: ledger
  labels:
    type: service
spec:
  workload:
    repo: https://github.com/microsoft/ledger-private
    branch: main
    path: ./workloads
  workspace: platform-team
`
	number, head, err := w.sim.OpenForkPR(sample.Owner, sample.ControlPlane, "reader", "main",
		map[string]*string{"workloads/ledger.yaml": &registration}, "Register the ledger", "reader")
	require.NoError(t, err)
	w.settle()
	runs := w.previews(sample.ControlPlane, head, "dev")
	require.Len(t, runs, 1)
	seen := w.everything(sample.ControlPlane, head) + w.commentsText(sample.ControlPlane, number) + w.logs.String()
	for _, secret := range []string{"topsecret", "vaultsync", "classified", "payroll", "ledger-private-gitops"} {
		require.NotContains(t, seen, secret)
	}
	require.Contains(t, runs[0].GetOutput().GetSummary(), "- not previewed: microsoft/ledger-private branch main is not registered on main yet\n")
	_, err = os.Stat(filepath.Join(w.cache, sample.Owner, privateRepo+".git"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing of the repository is fetched")

	_, head, err = w.sim.OpenBranchPR(sample.Owner, sample.ControlPlane, "register-ledger", "main",
		map[string]*string{"workloads/ledger.yaml": &registration}, "Register the ledger", "lead")
	require.NoError(t, err)
	w.settle()
	require.Contains(t, w.previews(sample.ControlPlane, head, "dev")[0].GetOutput().GetSummary(), "- not previewed: microsoft/ledger-private")
	require.NotContains(t, w.everything(sample.ControlPlane, head)+w.logs.String(), "topsecret")
	_, err = os.Stat(filepath.Join(w.cache, sample.Owner, privateRepo+".git"))
	require.ErrorIs(t, err, os.ErrNotExist, "not for a writer either: only what the base registers is read")
}

// A fork pull request on a workload repository adds a target: its preview shows counts and
// assignment names, no platform config; a triage user's click on "Show full preview" is
// refused; a writer's click shows the full diff, config values included.
func TestE2EForkPreviewOfAWorkloadShowsNoPlatformConfig(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.WorkloadRepo, "triager", "triage"))
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.WorkloadRepo, "lead", "write"))
	w.start()
	file := "workloads/observability.yaml"
	withGrafana := observability("./prometheus") + `    - name: grafana
      environment: dev
      manifests:
        repo: https://github.com/microsoft/kalypso-svc-gitops
        branch: dev
        path: ./grafana
`
	number, head, err := w.sim.OpenForkPR(sample.Owner, sample.WorkloadRepo, "mallory", "main", map[string]*string{file: &withGrafana}, "Add grafana", "mallory")
	require.NoError(t, err)
	w.settle()
	runs := w.previews(sample.WorkloadRepo, head, "dev")
	require.Len(t, runs, 1)
	run := runs[0]
	require.NotContains(t, w.everything(sample.WorkloadRepo, head)+w.commentsText(sample.WorkloadRepo, number), "mysql://")
	require.NotContains(t, run.GetOutput().GetText(), "DATABASE_URL")
	require.Equal(t, "success", run.GetConclusion())
	require.Contains(t, run.GetOutput().GetSummary(), "**Counts and names only:** the pull request comes from a fork")
	require.Contains(t, run.GetOutput().GetText(), "- `large/observability-grafana`: 3 files added\n")
	require.Equal(t, []string{"kalypso-full-preview"}, w.actionsOf(run))

	require.NoError(t, w.sim.ClickCheckRunAction(run.GetID(), "kalypso-full-preview", "triager"))
	w.settle()
	run = w.previews(sample.WorkloadRepo, head, "dev")[0]
	require.Contains(t, run.GetOutput().GetSummary(), `**Refused:** @triager cannot show the full preview: it needs write permission on microsoft/kalypso-svc-src (has "read")`)
	require.NotContains(t, w.everything(sample.WorkloadRepo, head), "mysql://")
	require.Equal(t, []string{"kalypso-full-preview"}, w.actionsOf(run))

	require.NoError(t, w.sim.ClickCheckRunAction(run.GetID(), "kalypso-full-preview", "lead"))
	w.settle()
	run = w.previews(sample.WorkloadRepo, head, "dev")[0]
	require.Regexp(t, "(?m)^\\*\\*Full preview approved\\*\\* by @lead at [0-9TZ:-]+ for head commit `"+head+"`\\.$", run.GetOutput().GetSummary())
	require.Contains(t, run.GetOutput().GetText(), "+  DATABASE_URL: mysql://west:8806/mysql2\n")
	require.NotContains(t, run.GetOutput().GetSummary(), "Counts and names only")
	require.Empty(t, w.actionsOf(run), "used once")
}

// Another App's comment (or a workflow echoing pull request text) that starts with the
// preview marker is there first: the app still creates its own comment, edits only that one
// after, and never touches the other.
func TestE2EAnotherAppsCommentDoesNotBlockPreviews(t *testing.T) {
	w := newWorld(t)
	w.start()
	w.sim.PauseWebhooks()
	number, head, err := w.sim.OpenForkPR(sample.Owner, sample.ControlPlane, "mallory", "dev",
		map[string]*string{"notes.txt": str("one")}, "Notes", "mallory")
	require.NoError(t, err)
	lookAlike := "<!-- kalypso-preview -->\n**Kalypso preview** of nothing: all green, merge away."
	require.NoError(t, w.sim.PostComment(sample.Owner, sample.ControlPlane, number, "other-app[bot]", lookAlike))
	w.sim.ResumeWebhooks()
	w.settle()
	own := func() []*github.IssueComment {
		var out []*github.IssueComment
		for _, c := range w.sim.Comments(sample.Owner, sample.ControlPlane, number) {
			if c.GetUser().GetLogin() == w.sim.BotLogin() {
				out = append(out, c)
			}
		}
		return out
	}
	require.Len(t, own(), 1, "the app's own comment is created")
	require.Contains(t, own()[0].GetBody(), "**Kalypso preview** of "+head[:7])
	head2, err := w.sim.PushForkPR(sample.Owner, sample.ControlPlane, number, map[string]*string{"notes.txt": str("two")}, "More notes")
	require.NoError(t, err)
	w.settle()
	require.Len(t, own(), 1, "edited in place")
	require.Contains(t, own()[0].GetBody(), "**Kalypso preview** of "+head2[:7])
	comments := w.sim.Comments(sample.Owner, sample.ControlPlane, number)
	require.Len(t, comments, 2)
	require.Equal(t, lookAlike, comments[0].GetBody(), "the other App's comment is untouched")
	require.NotContains(t, w.logs.String(), "preview comment", "no comment error")
}

// withGuard sets a guard on dev (on main, where guards are read).
func (w *world) withGuard(limit string) {
	w.t.Helper()
	env, err := w.sim.ReadFile(sample.Owner, sample.ControlPlane, "main", ".environments/dev.yaml")
	require.NoError(w.t, err)
	guarded := strings.TrimRight(env, " \n") + "\n  guard:\n    " + limit + "\n"
	w.commit(sample.ControlPlane, "main", map[string]*string{".environments/dev.yaml": &guarded})
}

// A writer accepts a held change; a later change is held on the same commit; the writer's
// click, replayed with a new delivery ID (the signature covers the body only), is refused and
// nothing is pushed: the click names the change its user was shown.
func TestE2EReplayedAcceptClickAfterALaterChange(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	w.withGuard("maxRemoved: 10%")
	w.start()
	sha := w.commit(sample.ControlPlane, "dev", map[string]*string{devPolicy: nil})
	check := w.check(sample.ControlPlane, sha, "dev")
	require.Equal(t, "dev: held by the blast-radius guard", check.GetOutput().GetTitle())
	first := heldDigest(t, check)
	require.NoError(t, w.sim.ClickCheckRunAction(check.GetID(), "kalypso-accept", "lead"))
	w.settle()
	click := w.lastClick("kalypso-accept")
	accepted := w.head("kalypso/dev")
	require.Contains(t, w.check(sample.ControlPlane, sha, "dev").GetOutput().GetSummary(), "for change `"+first+"`.")

	w.commit(sample.WorkloadRepo, "main", map[string]*string{"notes.md": str("a later change of a source")})
	check = w.check(sample.ControlPlane, sha, "dev")
	require.Equal(t, "dev: held by the blast-radius guard", check.GetOutput().GetTitle(), "the later change is held on the same commit")
	later := heldDigest(t, check)
	require.NotEqual(t, first, later)
	require.Equal(t, accepted, w.head("kalypso/dev"))

	w.replayAs(click)
	w.settle()
	require.Equal(t, accepted, w.head("kalypso/dev"), "nothing is pushed")
	check = w.check(sample.ControlPlane, sha, "dev")
	require.Equal(t, "failure", check.GetConclusion())
	require.Contains(t, check.GetOutput().GetSummary(), "**Refused:** the click of @lead names change `"+first+"`, but the change held now is `"+later+"`")
	require.NotContains(t, check.GetOutput().GetSummary(), "for change `"+later+"`.")
	require.Equal(t, []string{"kalypso-accept"}, w.actionsOf(check), "the later change can still be accepted by a click on it")

	require.NoError(t, w.sim.ClickCheckRunAction(check.GetID(), "kalypso-accept", "lead"))
	w.settle()
	check = w.check(sample.ControlPlane, sha, "dev")
	require.Equal(t, "success", check.GetConclusion(), "a click on the change shown counts")
	require.Contains(t, check.GetOutput().GetSummary(), "for change `"+later+"`.")
	w.replayAs(w.lastClick("kalypso-accept"))
	require.Contains(t, w.logs.String(), "nothing to accept", "a used click is refused")
}

func heldDigest(t *testing.T, run *github.CheckRun) string {
	t.Helper()
	summary := run.GetOutput().GetSummary()
	i := strings.Index(summary, "**Held change** `")
	require.GreaterOrEqual(t, i, 0, summary)
	rest := summary[i+len("**Held change** `"):]
	return rest[:strings.Index(rest, "`")]
}

// An acceptance recorded on the preview of a pull request into dev does not hold for a pull
// request of the same head commit into main, whose change is another: its preview is held,
// with the button, until accepted for itself.
func TestE2EAcceptanceBelongsToOneBaseAndChange(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	w.withGuard("maxRemoved: 10%")
	w.start()
	_, head, err := w.sim.OpenBranchPR(sample.Owner, sample.ControlPlane, "drop-observability", "dev", map[string]*string{devPolicy: nil}, "Drop observability", "lead")
	require.NoError(t, err)
	w.settle()
	run := w.previews(sample.ControlPlane, head, "dev")[0]
	require.Equal(t, "failure", run.GetConclusion())
	require.NoError(t, w.sim.ClickCheckRunAction(run.GetID(), "kalypso-accept", "lead"))
	w.settle()
	run = w.previews(sample.ControlPlane, head, "dev")[0]
	require.Equal(t, "success", run.GetConclusion())

	_, err = w.sim.OpenPR(sample.Owner, sample.ControlPlane, "drop-observability", "main", "Drop observability on main", "", "lead")
	require.NoError(t, err)
	w.settle()
	run = w.previews(sample.ControlPlane, head, "dev")[0]
	summary := run.GetOutput().GetSummary()
	require.Contains(t, w.actionsOf(run), "kalypso-accept", "the acceptance into dev does not hold: the change into main is accepted for itself")
	require.Equal(t, "failure", run.GetConclusion())
	require.NotRegexp(t, "^\\*\\*Blast radius accepted", summary)
	require.Contains(t, summary, "pull request #2 into `main`")
	require.Contains(t, summary, "**Blast radius:** the change removes 1 of 1 assignments", "the guard's verdict stands")
	require.Contains(t, summary, "(the pull request into `main`)")
}
