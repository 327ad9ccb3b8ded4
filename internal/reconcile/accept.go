package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/preview"
)

// AcceptAction is the identifier of the Accept button of a check run whose change exceeds the
// environment's blast-radius guard.
const AcceptAction = "kalypso-accept"

// acceptedLine is how an acceptance is recorded on a check run (only the app writes check
// runs, so the record cannot be forged by a person).
var acceptedLine = regexp.MustCompile("(?m)^\\*\\*Blast radius accepted\\*\\* by @[A-Za-z0-9-]+(\\[bot\\])? at [0-9TZ:.+-]+( for change `([0-9a-f]{12})`)?\\.$")

// heldLine names the held change of an environment check: a digest of the source commits it
// was computed from, so that an acceptance holds for exactly that change.
var heldLine = regexp.MustCompile("(?m)^\\*\\*Held change\\*\\* `([0-9a-f]{12})`")

// acceptance returns the acceptance recorded in a check run's summary, "" when none.
func acceptance(run *github.CheckRun) string {
	if run == nil {
		return ""
	}
	return acceptedLine.FindString(run.GetOutput().GetSummary())
}

func acceptButton() []*github.CheckRunAction {
	return []*github.CheckRunAction{{Label: "Accept", Description: "Accept this blast radius", Identifier: AcceptAction}}
}

// violationLines writes the limits a change exceeds, one paragraph each.
func violationLines(vs []preview.Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "**Blast radius:** the change %s.\n\n", v)
	}
	return b.String()
}

// Acceptance is the outcome of a click on Accept.
type Acceptance struct {
	Env      envref.Env
	Preview  bool   // the check run is a pull request's preview, not an environment's check
	Accepted bool   // the click counted and is recorded
	Refusal  string // why it did not count
}

// AcceptBlastRadius handles a click on Accept: it counts from a user with write permission
// on the control plane, while the check run (as GitHub has it now) still offers the button.
// The acceptance is recorded on the check run (who, when) and holds for its commit only; a
// refused click says why on the check run and keeps the button.
func (r *Reconciler) AcceptBlastRadius(ctx context.Context, inst int64, repo envref.Repo, event *github.CheckRun, user string) (*Acceptance, error) {
	a := &Acceptance{}
	plane, env, ok := ParseExternalID(event.GetExternalID())
	if p, e, preview := ParsePreviewExternalID(event.GetExternalID()); preview {
		plane, env, ok, a.Preview = p, e, true, true
	}
	if !ok || (!a.Preview && plane != repo) {
		return a, nil // not a check run of ours
	}
	a.Env = envref.Env{Installation: inst, ControlPlane: plane, Name: env}
	gh, err := r.clients.Client(ctx, inst)
	if err != nil {
		return nil, err
	}
	run, err := gh.CheckRun(ctx, repo, event.GetID())
	if err != nil {
		return nil, fmt.Errorf("check run %d: %w", event.GetID(), err)
	}
	summary := stripRefusals(run.GetOutput().GetSummary())
	if !offersAccept(run) {
		a.Refusal = "nothing to accept: the check run does not offer it (any more)"
		return a, nil
	}
	level, err := gh.Permission(ctx, plane, user)
	if err != nil {
		return nil, fmt.Errorf("permission of %s on %s: %w", user, plane, err)
	}
	if !ghport.CanWrite(level) {
		a.Refusal = fmt.Sprintf("@%s cannot accept: it needs write permission on %s (has %q)", user, plane, level)
		return a, gh.CompleteCheckRun(ctx, repo, run.GetID(), ghport.Completion{Name: run.GetName(), Conclusion: run.GetConclusion(),
			Title: run.GetOutput().GetTitle(), Summary: "**Refused:** " + a.Refusal + ".\n\n" + summary, Actions: acceptButton()})
	}
	line := fmt.Sprintf("**Blast radius accepted** by @%s at %s", user, r.now().UTC().Format("2006-01-02T15:04:05Z"))
	if m := heldLine.FindStringSubmatch(summary); m != nil {
		line += fmt.Sprintf(" for change `%s`", m[1])
	}
	line += "."
	a.Accepted = true
	return a, gh.CompleteCheckRun(ctx, repo, run.GetID(), ghport.Completion{Name: run.GetName(), Conclusion: "success",
		Title: env + ": blast radius accepted by @" + user, Summary: line + "\n\n" + summary})
}

// offersAccept reports whether a check run shows the Accept button's situation: failed on
// the guard and not accepted yet.
func offersAccept(run *github.CheckRun) bool {
	return run.GetStatus() == "completed" && run.GetConclusion() == "failure" && acceptance(run) == "" &&
		strings.Contains(run.GetOutput().GetSummary(), "**Blast radius:**")
}

var refusalLine = regexp.MustCompile(`(?m)^\*\*Refused:\*\* .*\n\n`)

func stripRefusals(summary string) string { return refusalLine.ReplaceAllString(summary, "") }

// acceptedChange returns the held change an acceptance names, "" when it names none.
func acceptedChange(line string) string {
	if m := acceptedLine.FindStringSubmatch(line); m != nil {
		return m[3]
	}
	return ""
}

// changeDigest identifies the change an outcome proposes by the source commits it was
// computed from.
func changeDigest(out *Outcome) string {
	h := sha256.New()
	for _, s := range out.Sources {
		fmt.Fprintf(h, "%s@%s=%s\n", s.Name, s.Repo, s.Commit)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
