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
// runs, so the record cannot be forged by a person): who, when, and the held change accepted.
var acceptedLine = regexp.MustCompile("(?m)^\\*\\*Blast radius accepted\\*\\* by @[A-Za-z0-9-]+(\\[bot\\])? at [0-9TZ:.+-]+( for change `([0-9a-f]{12})`)?\\.$")

// heldLine names the held change of a check run: a digest of what the change is (for an
// environment check, the source commits it was computed from; for a preview, its base and
// the files it changes), so that an acceptance holds for exactly that change.
var heldLine = regexp.MustCompile("(?m)^\\*\\*Held change\\*\\* `([0-9a-f]{12})`")

// acceptanceIn returns the line of a check run's summary that accepts change, "" when none.
func acceptanceIn(summary, change string) string {
	if change == "" {
		return ""
	}
	for _, m := range acceptedLine.FindAllStringSubmatch(summary, -1) {
		if m[3] == change {
			return m[0]
		}
	}
	return ""
}

// heldChange returns the digest of the held change a summary names, "" when it names none.
func heldChange(summary string) string {
	if m := heldLine.FindStringSubmatch(summary); m != nil {
		return m[1]
	}
	return ""
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

// AcceptBlastRadius handles a click on Accept. The click names the change its user was shown
// (the held change in the event's output); it counts from a user with write permission on the
// control plane, only while the check run, as GitHub has it now, holds that same change and
// no acceptance of it is recorded: a replayed click after a later change was held, or of a
// change already accepted, is refused. The acceptance is recorded on the check run (who, when,
// which change) and holds for that change only; a refused click says why on the check run and
// keeps the button.
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
	gh, run, unlock, err := r.clickedRun(ctx, inst, repo, reportKey(a.Preview, env), event.GetID())
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !offersAccept(run) {
		a.Refusal = "nothing to accept: the check run does not offer it (any more)"
		return a, nil
	}
	summary := stripRefusals(run.GetOutput().GetSummary())
	held := heldChange(summary)
	if seen := heldChange(event.GetOutput().GetSummary()); seen != held {
		a.Refusal = fmt.Sprintf("the click of @%s names change `%s`, but the change held now is `%s`: only a click on the change shown counts", user, orNone(seen), held)
		return a, refuse(ctx, gh, repo, run, a.Refusal)
	}
	level, err := gh.Permission(ctx, plane, user)
	if err != nil {
		return nil, fmt.Errorf("permission of %s on %s: %w", user, plane, err)
	}
	if !ghport.CanWrite(level) {
		a.Refusal = fmt.Sprintf("@%s cannot accept: it needs write permission on %s (has %q)", user, plane, level)
		return a, refuse(ctx, gh, repo, run, a.Refusal)
	}
	line := fmt.Sprintf("**Blast radius accepted** by @%s at %s for change `%s`.", user, r.now().UTC().Format("2006-01-02T15:04:05Z"), held)
	a.Accepted = true
	summary = line + "\n\n" + summary
	return a, gh.CompleteCheckRun(ctx, repo, run.GetID(), ghport.Completion{Name: run.GetName(), Conclusion: "success",
		Title: env + ": blast radius accepted by @" + user, Summary: summary, Actions: buttons("success", summary, run.GetHeadSHA())})
}

// clickedRun reads the check run a button was clicked on, as GitHub has it now, under the
// report lock of key (see reportKey): nothing rewrites it until unlock.
func (r *Reconciler) clickedRun(ctx context.Context, inst int64, repo envref.Repo, key string, id int64) (ghport.GitHub, *github.CheckRun, func(), error) {
	gh, err := r.clients.Client(ctx, inst)
	if err != nil {
		return nil, nil, nil, err
	}
	unlock := r.lockReports(repo, key)
	run, err := gh.CheckRun(ctx, repo, id)
	if err != nil {
		unlock()
		return nil, nil, nil, fmt.Errorf("check run %d: %w", id, err)
	}
	return gh, run, unlock, nil
}

func orNone(digest string) string {
	if digest == "" {
		return "none"
	}
	return digest
}

// reportKey is the key of lockReports for an environment's check runs or its previews.
func reportKey(preview bool, env string) string {
	if preview {
		return "preview\x00" + env
	}
	return env
}

// refuse records on a check run why a click did not count, keeping the run's state and buttons.
func refuse(ctx context.Context, gh ghport.GitHub, repo envref.Repo, run *github.CheckRun, reason string) error {
	summary := truncate("**Refused:** "+reason+".\n\n"+stripRefusals(run.GetOutput().GetSummary()), maxOutputText)
	return gh.CompleteCheckRun(ctx, repo, run.GetID(), ghport.Completion{Name: run.GetName(), Conclusion: run.GetConclusion(),
		Title: run.GetOutput().GetTitle(), Summary: summary, Actions: buttons(run.GetConclusion(), summary, run.GetHeadSHA())})
}

// offersAccept reports whether a check run shows the Accept button's situation: failed on
// the guard, holding a change that no acceptance recorded on it names.
func offersAccept(run *github.CheckRun) bool {
	return offersAcceptIn(run.GetStatus() == "completed", run.GetConclusion(), run.GetOutput().GetSummary())
}

func offersAcceptIn(completed bool, conclusion, summary string) bool {
	held := heldChange(summary)
	return completed && conclusion == "failure" && held != "" && strings.Contains(summary, "**Blast radius:**") &&
		acceptanceIn(summary, held) == ""
}

// buttons are the buttons a completed check run with this conclusion and summary shows.
func buttons(conclusion, summary, head string) []*github.CheckRunAction {
	var out []*github.CheckRunAction
	if offersAcceptIn(true, conclusion, summary) {
		out = append(out, acceptButton()...)
	}
	if offersFullPreview(summary, head) {
		out = append(out, fullPreviewButton())
	}
	return out
}

var refusalLine = regexp.MustCompile(`(?m)^\*\*Refused:\*\* .*\n\n`)

func stripRefusals(summary string) string { return refusalLine.ReplaceAllString(summary, "") }

// changeDigest identifies the change an outcome proposes by the source commits it was
// computed from.
func changeDigest(out *Outcome) string {
	h := sha256.New()
	for _, s := range out.Sources {
		fmt.Fprintf(h, "%s@%s=%s\n", s.Name, s.Repo, s.Commit)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// maxRecords bounds the decisions carried from one version of a check run to the next.
const maxRecords = 20

// records returns the decisions recorded in a check run's summary: acceptances of held
// changes and approvals of full previews, in order.
func records(summary string) []string {
	var out []string
	for _, line := range strings.Split(summary, "\n") {
		if acceptedLine.MatchString(line) || approvedLine.MatchString(line) {
			out = append(out, line)
		}
	}
	return out
}

// recordsHeading introduces, at the end of a summary, the decisions that do not apply to what
// the check run says now.
const recordsHeading = "**Recorded on this check run before:**"

// keepRecords carries the decisions recorded on the existing check run into the summary that
// replaces it (the newest maxRecords of them, at its end), so that each stays used once: what
// was accepted stays accepted, and is never offered to a click again.
func keepRecords(summary string, existing *github.CheckRun) string {
	if existing == nil {
		return summary
	}
	var carried []string
	for _, line := range records(existing.GetOutput().GetSummary()) {
		if !strings.Contains(summary, line) {
			carried = append(carried, line)
		}
	}
	if len(carried) == 0 {
		return summary
	}
	block := "\n\n" + recordsHeading + "\n\n" + strings.Join(carried[max(0, len(carried)-maxRecords):], "\n\n") + "\n"
	return truncate(summary, maxOutputText-len(block)) + block
}
