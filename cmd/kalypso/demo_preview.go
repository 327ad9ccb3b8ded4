package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// demoContributor opens the pull request of the preview act from a fork; she can read the
// control plane but not write to it.
const demoContributor = "alice"

const devPolicy = "scheduling/platform-services/observability-policy.yaml"

// previewAct opens a pull request into dev that deletes the scheduling policy, which would
// remove every assignment of dev: its preview fails dev's guard (maxRemoved: 50%, declared in
// the previous act) and, from a fork, shows counts and names only; the contributor's own Accept
// is refused, the platform lead shows the full preview and accepts it.
func (w *demoWorld) previewAct(ctx context.Context) error {
	if err := w.sim.SetPermission(sample.Owner, sample.ControlPlane, demoContributor, "read"); err != nil {
		return err
	}
	fmt.Fprintf(w.out, "\n1. %s opens a pull request from her fork into dev that deletes %s\n", demoContributor, devPolicy)
	number, head, err := w.sim.OpenForkPR(sample.Owner, sample.ControlPlane, demoContributor, "dev",
		map[string]*string{devPolicy: nil}, "Stop scheduling observability", demoContributor)
	if err != nil {
		return err
	}
	run, err := w.waitPreview(ctx, head, func(r *github.CheckRun) bool { return r.GetStatus() == "completed" })
	if err != nil {
		return err
	}
	fmt.Fprintln(w.out, "  The app renders dev with the pull request's result and compares it with dev's GitOps branch;")
	fmt.Fprintln(w.out, "  nothing is pushed anywhere.")
	w.showPreview(run)
	var comments []*github.IssueComment
	if err := poll(ctx, func() bool {
		comments = w.sim.Comments(sample.Owner, sample.ControlPlane, number)
		return len(comments) > 0 && strings.Contains(comments[0].GetBody(), short(head))
	}, "the preview's comment on pull request #"+fmt.Sprint(number)); err != nil {
		return err
	}
	fmt.Fprintf(w.out, "  comment on pull request #%d:\n", number)
	for _, line := range strings.Split(strings.TrimSpace(comments[0].GetBody()), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "<!--") {
			fmt.Fprintf(w.out, "      %s\n", line)
		}
	}

	fmt.Fprintf(w.out, "\n2. %s clicks Accept on her own pull request's check run\n", demoContributor)
	if err := w.sim.ClickCheckRunAction(run.GetID(), reconcile.AcceptAction, demoContributor); err != nil {
		return err
	}
	if run, err = w.waitPreview(ctx, head, func(r *github.CheckRun) bool {
		return strings.Contains(r.GetOutput().GetSummary(), "**Refused:**")
	}); err != nil {
		return err
	}
	w.showPreview(run)

	fmt.Fprintf(w.out, "\n3. %s, who may write to the control plane, clicks Show full preview\n", demoUser)
	if err := w.sim.ClickCheckRunAction(run.GetID(), reconcile.FullPreviewAction, demoUser); err != nil {
		return err
	}
	if run, err = w.waitPreview(ctx, head, func(r *github.CheckRun) bool {
		summary := r.GetOutput().GetSummary()
		return strings.Contains(summary, "**Full preview approved**") && !strings.Contains(summary, "**Counts and names only:**")
	}); err != nil {
		return err
	}
	w.showPreview(run)
	fmt.Fprintln(w.out, "  The check run's text now holds the rendered diff, one section per assignment:")
	for _, line := range strings.Split(run.GetOutput().GetText(), "\n") {
		if heading, ok := strings.CutPrefix(line, "<details><summary>"); ok {
			fmt.Fprintf(w.out, "      %s\n", strings.TrimSuffix(heading, "</summary>"))
		}
	}
	fmt.Fprintln(w.out, "  A fork's preview shows counts and names only until a writer approves the full preview:")
	fmt.Fprintln(w.out, "  platform-owned files are never shown to someone who cannot read them.")

	fmt.Fprintf(w.out, "\n4. %s clicks Accept\n", demoUser)
	if err := w.sim.ClickCheckRunAction(run.GetID(), reconcile.AcceptAction, demoUser); err != nil {
		return err
	}
	if run, err = w.waitPreview(ctx, head, func(r *github.CheckRun) bool { return r.GetConclusion() == "success" }); err != nil {
		return err
	}
	w.showPreview(run)
	fmt.Fprintln(w.out, "  The acceptance holds for this head commit only: a new commit is measured against the guard again.")
	return nil
}

// waitPreview waits until dev's preview check run on head satisfies cond.
func (w *demoWorld) waitPreview(ctx context.Context, head string, cond func(*github.CheckRun) bool) (*github.CheckRun, error) {
	var run *github.CheckRun
	err := poll(ctx, func() bool {
		run = nil
		for _, r := range w.sim.CheckRuns(sample.Owner, sample.ControlPlane, head) {
			if r.GetName() == "Kalypso preview / dev" {
				run = r
			}
		}
		return run != nil && cond(run)
	}, "the preview of "+short(head))
	return run, err
}

// showPreview prints a preview check run: conclusion, title, the summary's lines, its buttons.
func (w *demoWorld) showPreview(run *github.CheckRun) {
	fmt.Fprintf(w.out, "  check run %q on %s: %s — %s\n", run.GetName(), short(run.GetHeadSHA()), run.GetConclusion(), run.GetOutput().GetTitle())
	for _, line := range strings.Split(strings.TrimSpace(run.GetOutput().GetSummary()), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			fmt.Fprintf(w.out, "      %s\n", line)
		}
	}
	if b := w.buttons(run); len(b) > 0 {
		fmt.Fprintf(w.out, "      buttons: %v\n", b)
	}
}
