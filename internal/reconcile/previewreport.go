package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/plural"
	"github.com/kalypso-gitops/kalypso/internal/preview"
)

// PreviewCheckName is the name of an environment's preview check run on a pull request.
func PreviewCheckName(env string) string { return "Kalypso preview / " + env }

// PreviewExternalID identifies an environment's preview check run across restarts.
func PreviewExternalID(controlPlane envref.Repo, env string) string {
	return "kalypso-preview:" + controlPlane.String() + ":" + env
}

// ParsePreviewExternalID reads back the control plane and environment of a preview check run.
func ParsePreviewExternalID(id string) (envref.Repo, string, bool) {
	rest, ok := strings.CutPrefix(id, "kalypso-preview:")
	if !ok {
		return envref.Repo{}, "", false
	}
	return ParseExternalID("kalypso:" + rest)
}

// PreviewConclusion is failure for an error or a guard limit exceeded, neutral when the
// environment does not change, success otherwise. ownErrors counts the errors that fail it: all
// of them for a control plane, those in its own files for a workload repository, so that one
// team's broken files never fail another team's pull request.
func PreviewConclusion(p *Preview, ownErrors int, failure error) string {
	switch {
	case failure != nil || ownErrors > 0 || len(p.Violations) > 0:
		return "failure"
	case p.Plan.Empty():
		return "neutral"
	}
	return "success"
}

// ReportPreview posts or updates the preview check run of one environment on the pull
// request's head commit: errors in the pull request's files as annotations, counts in the
// summary, the diff in the text; for an audience that may not see everything (pr.Audience),
// counts and assignment names only, with a button to show the rest, until a full preview of
// the head commit is approved on the check run. failure is set when the preview could not be
// computed. The decisions recorded on the check run are kept.
func (r *Reconciler) ReportPreview(ctx context.Context, pr PullRequest, env envref.Env, p *Preview, failure error) (*github.CheckRun, error) {
	gh, err := r.clients.Client(ctx, pr.Installation)
	if err != nil {
		return nil, err
	}
	if p == nil {
		p = &Preview{Env: env}
	}
	name, externalID := PreviewCheckName(env.Name), PreviewExternalID(env.ControlPlane, env.Name)
	unlock := r.lockReports(pr.Repo, reportKey(true, env.Name))
	defer unlock()
	existing, err := ghport.FindCheckRun(ctx, gh, pr.Repo, pr.HeadSHA, name, externalID)
	if err != nil {
		return nil, err
	}
	have := existing.GetOutput().GetSummary()
	full := pr.Audience.Full || approvalIn(have, pr.HeadSHA) != ""
	want, annotations := previewContent(pr, p, have, full, failure)
	want.Summary = keepRecords(want.Summary, existing)
	want.Actions = buttons(want.Conclusion, want.Summary, pr.HeadSHA)
	c := Commit{Installation: pr.Installation, Repo: pr.Repo, SHA: pr.HeadSHA}
	run, rest, err := r.writeCheckRun(ctx, gh, c, name, externalID, existing, want, annotations)
	if err != nil {
		return nil, err
	}
	if existing != nil && run.GetID() == existing.GetID() && len(want.Actions) == 0 &&
		len(buttons(existing.GetConclusion(), have, pr.HeadSHA)) > 0 { // an update keeps the buttons it does not name
		if err := gh.CompleteCheckRun(ctx, pr.Repo, run.GetID(), ghport.Completion{Name: name, Conclusion: want.Conclusion,
			Title: want.Title, Summary: want.Summary}); err != nil {
			return nil, err
		}
	}
	return run, addAnnotations(ctx, gh, pr.Repo, run, name, want, rest)
}

// previewContent is the check run of a preview. have is the summary of the check run already
// on the head commit: an acceptance recorded there of the same change (base and files) holds
// while the change still exceeds the guard. full says whether everything may be shown.
func previewContent(pr PullRequest, p *Preview, have string, full bool, failure error) (checkContent, []*github.CheckRunAnnotation) {
	if failure != nil || p.Proposed == nil {
		return failedPreview(pr, p, full, failure), nil
	}
	c, own := ownFiles(pr, p)
	var annotations []*github.CheckRunAnnotation
	var text string
	if full {
		var others string
		annotations, others = annotate(c, &Outcome{Env: p.Env, Result: p.Proposed}, nil)
		hint := fmt.Sprintf("To see everything, run `kalypso plan --diff` for environment %s with the pull request's branch checked out.", p.Env.Name)
		budget := preview.MaxCheckRunText - len(others) - 64
		text = others + preview.Markdown(preview.Sections(p.Plan, p.Prev, p.Next, p.Proposed.Root), budget, hint)
	} else {
		annotations = restrictedAnnotations(c, pr, p)
		text = "Changed assignments:\n\n" + preview.Names(p.Plan, preview.MaxCheckRunText-64)
	}
	summary := previewSummary(pr, p, full, len(annotations))
	if len(p.Violations) > 0 {
		change := previewChange(p, pr.Base)
		summary = fmt.Sprintf("**Held change** `%s` (the pull request into `%s`)\n\n", change, pr.Base) + summary
		if accepted := acceptanceIn(have, change); accepted != "" {
			summary = accepted + "\n\n" + summary
			p = acceptedPreview(p)
		} else {
			summary = "A user with write permission on " + p.Env.ControlPlane.String() + " can accept this blast radius with the Accept button.\n\n" + summary
		}
	}
	if !full {
		summary = countsOnly(pr) + summary
	}
	return checkContent{Conclusion: PreviewConclusion(p, own, nil), Title: previewTitle(p), Summary: truncate(summary, maxOutputText), Text: text,
		Annotations: len(annotations)}, annotations
}

// failedPreview is the check run of a preview that could not be computed; the reason is
// shown in a full preview only (it may name what the author cannot read).
func failedPreview(pr PullRequest, p *Preview, full bool, failure error) checkContent {
	msg := "the preview could not be computed"
	if failure != nil && full {
		msg = failure.Error()
	}
	summary := fmt.Sprintf("Environment **%s**, pull request #%d into `%s`: not previewed.\n\n**Error:** %s\n", p.Env.Name, pr.Number, pr.Base, msg)
	if !full {
		summary = countsOnly(pr) + summary
	}
	return checkContent{Conclusion: "failure", Title: "could not preview " + p.Env.Name, Summary: truncate(summary, maxOutputText)}
}

// countsOnly says why a preview shows counts and names only, and how to see the rest.
func countsOnly(pr PullRequest) string {
	why := pr.Audience.Why
	if why == "" {
		why = "its author's permission is not known"
	}
	return fmt.Sprintf("**Counts and names only:** %s, so this preview shows no file content and names no file of a repository its author may not read. "+
		"A user with write permission on %s can show everything with the button **Show full preview** (for this head commit).\n\n", why, pr.Repo)
}

// ownFiles is the pull request's commit with the prefixes of its own files, and how many
// errors fail its preview: all of them for a control plane, those in its own files for a
// workload repository.
func ownFiles(pr PullRequest, p *Preview) (Commit, int) {
	c := Commit{Repo: pr.Repo, SHA: pr.HeadSHA, Prefixes: []string{pr.Base + ":"}}
	own := len(p.Proposed.Errors)
	switch p.As {
	case AsMain:
		c.Prefixes = []string{gitsource.MainPrefix(p.Commit)}
	case AsWorkload:
		c.Prefixes = []string{WorkloadPrefix(pr.Repo, pr.Base)}
		own = 0
		for _, e := range p.Proposed.Errors {
			if _, ok := ownPath(c, e.Pos.File); ok {
				own++
			}
		}
	}
	return c, own
}

// acceptedPreview is p with its violations accepted: they no longer fail it.
func acceptedPreview(p *Preview) *Preview {
	cp := *p
	cp.Violations = nil
	return &cp
}

// previewChange identifies the change a preview shows: the pull request's base and every file
// it adds, changes or removes with its content before and after. An acceptance holds for
// exactly this pair of base and change.
func previewChange(p *Preview, base string) string {
	h := sha256.New()
	fmt.Fprintf(h, "base %s\n", base)
	prefix := ""
	if p.Proposed.Root != "" {
		prefix = p.Proposed.Root + "/"
	}
	for _, g := range p.Plan.Groups {
		for _, c := range g.Changes {
			fmt.Fprintf(h, "%s %s %x %x\n", c.Kind, c.Path, sha256.Sum256(p.Prev[prefix+c.Path]), sha256.Sum256(p.Next[prefix+c.Path]))
		}
	}
	for _, c := range p.Plan.Other {
		fmt.Fprintf(h, "%s %s %x %x\n", c.Kind, c.Path, sha256.Sum256(p.Prev[prefix+c.Path]), sha256.Sum256(p.Next[prefix+c.Path]))
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func previewTitle(p *Preview) string {
	a, c, r := p.Blast.Added, p.Blast.Changed, p.Blast.Removed
	switch {
	case len(p.Proposed.Errors) > 0:
		return fmt.Sprintf("%s in %s", plural.Count(len(p.Proposed.Errors), "error"), p.Env.Name)
	case len(p.Violations) > 0:
		return fmt.Sprintf("%s: blast radius over the guard's limit", p.Env.Name)
	case p.Plan.Empty():
		return p.Env.Name + ": no change"
	}
	return fmt.Sprintf("%s: %d added, %d changed, %d removed", p.Env.Name, a, c, r)
}

// previewSummary names the pull request, gives the guard's verdict, the registrations not
// previewed, the errors, then the assignments added, changed and removed per cluster type.
func previewSummary(pr PullRequest, p *Preview, full bool, annotated int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Environment **%s**, pull request #%d into `%s` read as `%s`: %s added, %d changed, %d removed of %d; %s touched of %d.\n\n",
		p.Env.Name, pr.Number, pr.Base, p.Read, plural.Count(p.Blast.Added, "assignment"), p.Blast.Changed, p.Blast.Removed, p.Blast.Assignments,
		plural.Count(p.Blast.Touched, "cluster type"), p.Blast.ClusterTypes)
	b.WriteString(violationLines(p.Violations))
	b.WriteString(notPreviewedLines(p.NotPreviewed))
	switch n := len(p.Proposed.Errors); {
	case n > 0 && (full || annotated == n):
		fmt.Fprintf(&b, "%s; those in the pull request's files are annotated.\n\n", plural.Count(n, "error"))
	case n > 0:
		fmt.Fprintf(&b, "%s: %d annotated in the pull request's files; **%d not shown:** a registered repository could not be rendered.\n\n",
			plural.Count(n, "error"), annotated, n-annotated)
	}
	counts := preview.ByClusterType(p.Prev, p.Next, p.Proposed.Root)
	if len(counts) > 0 {
		b.WriteString("| cluster type | added | changed | removed |\n|---|---|---|---|\n")
	}
	for _, c := range counts {
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", c.ClusterType, c.Added, c.Changed, c.Removed)
	}
	return b.String()
}

// notPreviewedLines lists the workload branches a preview did not read, once each.
func notPreviewedLines(refused []string) string {
	if len(refused) == 0 {
		return ""
	}
	lines := slices.Compact(slices.Sorted(slices.Values(refused)))
	var b strings.Builder
	b.WriteString("Registrations the pull request adds are not previewed, and nothing of their repositories was fetched:\n\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	b.WriteString("\n")
	return b.String()
}
