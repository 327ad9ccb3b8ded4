package reconcile

import (
	"context"
	"fmt"
	"regexp"
	"strconv"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// FullPreviewAction is the identifier of the button of a preview that shows counts and
// assignment names only: a user with write permission on the repository shows it in full.
const FullPreviewAction = "kalypso-full-preview"

func fullPreviewButton() *github.CheckRunAction {
	return &github.CheckRunAction{Label: "Show full preview", Description: "Show the diffs and errors in full", Identifier: FullPreviewAction}
}

// countsOnlyLine starts the summary of a preview that shows counts and assignment names only.
var countsOnlyLine = regexp.MustCompile(`(?m)^\*\*Counts and names only:\*\* `)

// approvedLine is how the approval of a full preview is recorded on a check run: who, when,
// and the head commit it holds for (only the app writes check runs).
var approvedLine = regexp.MustCompile("(?m)^\\*\\*Full preview approved\\*\\* by @[A-Za-z0-9-]+(\\[bot\\])? at [0-9TZ:.+-]+ for head commit `([0-9a-f]{40})`\\.$")

// pullLine names the pull request a preview check run was written for.
var pullLine = regexp.MustCompile(`(?m)^Environment \*\*[^*\n]+\*\*, pull request #([0-9]{1,9}) into `)

// approvalIn returns the line of a summary that approves a full preview of head, "" when none.
func approvalIn(summary, head string) string {
	for _, m := range approvedLine.FindAllStringSubmatch(summary, -1) {
		if m[2] == head {
			return m[0]
		}
	}
	return ""
}

// offersFullPreview reports whether a preview's summary shows counts and names only, with no
// full preview approved for its head commit.
func offersFullPreview(summary, head string) bool {
	return countsOnlyLine.MatchString(summary) && approvalIn(summary, head) == ""
}

// Approval is the outcome of a click on "Show full preview".
type Approval struct {
	Env      envref.Env
	Number   int    // the pull request the check run was last written for, to preview again
	Approved bool   // the click counted and is recorded
	Refusal  string // why it did not count
}

// ApproveFullPreview handles a click on "Show full preview": it counts from a user with write
// permission on the repository of the check run, while the check run (as GitHub has it now)
// still shows counts and names only for its head commit. The approval is recorded on the check
// run (who, when, which head commit), holds for that head commit only, and is used once: the
// button goes. A refused click says why on the check run and keeps the button. The caller
// previews the pull request again, which then shows everything.
func (r *Reconciler) ApproveFullPreview(ctx context.Context, inst int64, repo envref.Repo, event *github.CheckRun, user string) (*Approval, error) {
	plane, env, ok := ParsePreviewExternalID(event.GetExternalID())
	if !ok {
		return &Approval{}, nil // not a preview of ours
	}
	a := &Approval{Env: envref.Env{Installation: inst, ControlPlane: plane, Name: env}}
	gh, run, unlock, err := r.clickedRun(ctx, inst, repo, reportKey(true, env), event.GetID())
	if err != nil {
		return nil, err
	}
	defer unlock()
	summary, head := stripRefusals(run.GetOutput().GetSummary()), run.GetHeadSHA()
	if m := pullLine.FindStringSubmatch(summary); m != nil {
		a.Number, _ = strconv.Atoi(m[1])
	}
	if run.GetStatus() != "completed" || !offersFullPreview(summary, head) {
		a.Refusal = "nothing to approve: the check run shows the full preview (already)"
		return a, nil
	}
	level, err := gh.Permission(ctx, repo, user)
	if err != nil {
		return nil, fmt.Errorf("permission of %s on %s: %w", user, repo, err)
	}
	if !ghport.CanWrite(level) {
		a.Refusal = fmt.Sprintf("@%s cannot show the full preview: it needs write permission on %s (has %q)", user, repo, level)
		return a, refuse(ctx, gh, repo, run, a.Refusal)
	}
	line := fmt.Sprintf("**Full preview approved** by @%s at %s for head commit `%s`.", user, r.now().UTC().Format("2006-01-02T15:04:05Z"), head)
	a.Approved = true
	summary = truncate(line+"\n\n"+summary, maxOutputText)
	return a, gh.CompleteCheckRun(ctx, repo, run.GetID(), ghport.Completion{Name: run.GetName(), Conclusion: run.GetConclusion(),
		Title: run.GetOutput().GetTitle(), Summary: summary, Actions: buttons(run.GetConclusion(), summary, head)})
}
