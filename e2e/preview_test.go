package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

const westUSConfig = "cluster-types/west-us/west-us-config.yaml"

// previews returns the preview check runs of an environment on a commit, newest first.
func (w *world) previews(repo, sha, env string) []*github.CheckRun {
	var out []*github.CheckRun
	for _, run := range w.sim.CheckRuns(sample.Owner, repo, sha) {
		if run.GetName() == "Kalypso preview / "+env {
			out = append(out, run)
		}
	}
	return out
}

// A pull request from a fork into the dev branch is previewed through the control plane's own
// refs/pull/N/head (the fork is not served at all): a check run on its head commit naming the
// changed assignments, one comment; nothing is pushed. Once a writer shows the full preview, the
// check run holds exactly the diff of the changed assignments. A new commit breaking a file
// turns the new head's check run to failure with the annotation at the file and line, and edits
// the one comment. Once closed, nothing more is posted.
func TestE2EPreviewOfAnEnvironmentBranchPullRequest(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	w.start()
	w.sim.ResetCalls()
	gitopsBefore, err := w.sim.Branches(sample.Owner, sample.GitOpsRepo)
	require.NoError(t, err)
	west, err := w.sim.ReadFile(sample.Owner, sample.ControlPlane, "dev", westUSConfig)
	require.NoError(t, err)

	tuned := strings.Replace(west, "mysql2", "mysql3", 1)
	number, head, err := w.sim.OpenForkPR(sample.Owner, sample.ControlPlane, "mallory", "dev",
		map[string]*string{westUSConfig: &tuned}, "Tune west", "mallory")
	require.NoError(t, err)
	w.settle()

	runs := w.previews(sample.ControlPlane, head, "dev")
	require.Len(t, runs, 1)
	run := runs[0]
	require.Equal(t, "success", run.GetConclusion(), run.GetOutput().GetSummary())
	require.Contains(t, run.GetOutput().GetSummary(), fmt.Sprintf("pull request #%d into `dev` read as `merge`", number), "GitHub's test merge is read when there is one")
	require.NotContains(t, run.GetOutput().GetSummary()+run.GetOutput().GetText(), "mysql", "a fork's preview shows counts and names only")
	require.Contains(t, run.GetOutput().GetText(), "- `large/observability-prometheus`: 1 file changed\n")
	require.NoError(t, w.sim.ClickCheckRunAction(run.GetID(), "kalypso-full-preview", "lead"))
	w.settle()
	run = w.previews(sample.ControlPlane, head, "dev")[0]
	text := run.GetOutput().GetText()
	changed := regexp.MustCompile(`<summary>([^<]+): 1 file changed</summary>`).FindAllStringSubmatch(text, -1)
	require.NotEmpty(t, changed)
	require.Equal(t, len(changed), strings.Count(text, "<summary>"), "only changed assignments")
	for _, m := range changed {
		require.Contains(t, text, "+++ b/"+m[1]+"/platform-config.yaml\n")
	}
	require.Equal(t, len(changed), strings.Count(text, "+++ b/"))
	require.Contains(t, text, "-  DATABASE_URL: mysql://west:8806/mysql2\n+  DATABASE_URL: mysql://west:8806/mysql3\n")
	require.Empty(t, w.previews(sample.ControlPlane, head, "stage"), "stage does not read the dev branch")

	require.Zero(t, w.sim.GitCalls()["POST git-receive-pack"], "nothing is pushed")
	gitopsAfter, err := w.sim.Branches(sample.Owner, sample.GitOpsRepo)
	require.NoError(t, err)
	require.Equal(t, gitopsBefore, gitopsAfter, "nothing is pushed")
	comments := w.sim.Comments(sample.Owner, sample.ControlPlane, number)
	require.Len(t, comments, 1)
	require.Contains(t, comments[0].GetBody(), "**Kalypso preview** of "+head[:7])
	require.Contains(t, comments[0].GetBody(), "| dev | ✅")

	broken := tuned + "  BROKEN: [\n"
	head2, err := w.sim.PushForkPR(sample.Owner, sample.ControlPlane, number, map[string]*string{westUSConfig: &broken}, "Break west")
	require.NoError(t, err)
	w.settle()
	runs = w.previews(sample.ControlPlane, head2, "dev")
	require.Len(t, runs, 1)
	require.Equal(t, "failure", runs[0].GetConclusion())
	annotations, _, err := w.sim.CheckRunDetails(runs[0].GetID())
	require.NoError(t, err)
	var at []string
	for _, a := range annotations {
		at = append(at, fmt.Sprintf("%s:%d: %s", a.GetPath(), a.GetStartLine(), a.GetMessage()))
	}
	require.Contains(t, strings.Join(at, "\n"), fmt.Sprintf("%s:%d: ", westUSConfig, strings.Count(broken, "\n")), "the annotation is at the broken line")
	comments = w.sim.Comments(sample.Owner, sample.ControlPlane, number)
	require.Len(t, comments, 1, "the one comment is edited, not a new one")
	require.Contains(t, comments[0].GetBody(), "**Kalypso preview** of "+head2[:7])
	require.Contains(t, comments[0].GetBody(), "| dev | ❌")

	require.NoError(t, w.sim.ClosePR(sample.Owner, sample.ControlPlane, number, "mallory"))
	w.settle()
	require.Len(t, w.previews(sample.ControlPlane, head2, "dev"), 1, "nothing more for a closed pull request")
	require.Equal(t, comments[0].GetBody(), w.sim.Comments(sample.Owner, sample.ControlPlane, number)[0].GetBody())
	require.Zero(t, w.sim.GitCalls()["POST git-receive-pack"], "nothing is pushed")
}

// A writer's pull request into main changing a template is previewed in every environment as if
// pinned: dev, whose assignment uses it, changes (the diff in full); stage, which has no
// assignment, is neutral.
func TestE2EPreviewOfAMainPullRequest(t *testing.T) {
	w := newWorld(t)
	w.start()
	file := "templates/scheduler_v1alpha1_template_arc-flux.yaml"
	tmpl, err := w.sim.ReadFile(sample.Owner, sample.ControlPlane, "main", file)
	require.NoError(t, err)
	changed := strings.Replace(tmpl, "interval: 30s", "interval: 45s", 1)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	_, head, err := w.sim.OpenBranchPR(sample.Owner, sample.ControlPlane, "slower-polls", "main", map[string]*string{file: &changed}, "Slower polls", "lead")
	require.NoError(t, err)
	w.settle()
	dev := w.previews(sample.ControlPlane, head, "dev")
	require.Len(t, dev, 1)
	require.Equal(t, "success", dev[0].GetConclusion(), dev[0].GetOutput().GetSummary())
	require.Contains(t, dev[0].GetOutput().GetText(), "-  interval: 30s\n+  interval: 45s\n")
	stage := w.previews(sample.ControlPlane, head, "stage")
	require.Len(t, stage, 1)
	require.Equal(t, "neutral", stage[0].GetConclusion())
}

// A writer's pull request on the registered branch of a workload repository is previewed in
// every environment that reads the branch, on the workload repository's head commit.
func TestE2EPreviewOfAWorkloadPullRequest(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.WorkloadRepo, "dev-lead", "write"))
	w.start()
	w.sim.ResetCalls()
	file := "workloads/observability.yaml"
	_, head, err := w.sim.OpenBranchPR(sample.Owner, sample.WorkloadRepo, "move-prometheus", "main",
		map[string]*string{file: str(observability("./prometheus-v2"))}, "Move prometheus", "dev-lead")
	require.NoError(t, err)
	w.settle()
	dev := w.previews(sample.WorkloadRepo, head, "dev")
	require.Len(t, dev, 1)
	require.Equal(t, "success", dev[0].GetConclusion(), dev[0].GetOutput().GetSummary())
	require.Contains(t, dev[0].GetOutput().GetText(), `+  path: "./prometheus-v2"`)
	require.Empty(t, w.previews(sample.ControlPlane, head, "dev"), "check runs go on the workload repository")
	require.Zero(t, w.sim.CallCount("POST /repos/{owner}/{repo}/pulls"), "nothing is proposed")
	require.Zero(t, w.sim.GitCalls()["POST git-receive-pack"], "nothing is pushed")
}

// A diff larger than GitHub's 65,535 characters: the text stays within the limit and names the
// assignments left out, with their count and how to see everything.
func TestE2EPreviewOfAHugeDiffStaysWithinTheLimit(t *testing.T) {
	w := newWorld(t)
	w.start()
	west, err := w.sim.ReadFile(sample.Owner, sample.ControlPlane, "dev", westUSConfig)
	require.NoError(t, err)
	huge := strings.TrimRight(west, "\n") + "\n  BIG: " + strings.Repeat("x", 70_000) + "\n"
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	_, head, err := w.sim.OpenBranchPR(sample.Owner, sample.ControlPlane, "huge", "dev", map[string]*string{westUSConfig: &huge}, "Huge", "lead")
	require.NoError(t, err)
	w.settle()
	runs := w.previews(sample.ControlPlane, head, "dev")
	require.Len(t, runs, 1)
	text := runs[0].GetOutput().GetText()
	require.LessOrEqual(t, len(text), 65535)
	require.Contains(t, text, "of the changed assignments are too large to show here**: `large/observability-prometheus`")
	require.Contains(t, text, "kalypso plan --diff")
	require.Equal(t, "success", runs[0].GetConclusion())
}
