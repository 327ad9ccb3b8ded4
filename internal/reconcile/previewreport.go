package reconcile

import (
	"context"
	"fmt"
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
// summary, the diff in the text. failure is set when the preview could not be computed.
func (r *Reconciler) ReportPreview(ctx context.Context, pr PullRequest, env envref.Env, p *Preview, failure error) (*github.CheckRun, error) {
	gh, err := r.clients.Client(ctx, pr.Installation)
	if err != nil {
		return nil, err
	}
	if p == nil {
		p = &Preview{Env: env}
	}
	name, externalID := PreviewCheckName(env.Name), PreviewExternalID(env.ControlPlane, env.Name)
	unlock := r.lockReports(pr.Repo, "preview\x00"+env.Name)
	defer unlock()
	existing, err := ghport.FindCheckRun(ctx, gh, pr.Repo, pr.HeadSHA, name, externalID)
	if err != nil {
		return nil, err
	}
	want, annotations := previewContent(pr, p, acceptance(existing), failure)
	c := Commit{Installation: pr.Installation, Repo: pr.Repo, SHA: pr.HeadSHA}
	run, rest, err := r.writeCheckRun(ctx, gh, c, name, externalID, existing, want, annotations)
	if err != nil {
		return nil, err
	}
	return run, addAnnotations(ctx, gh, pr.Repo, run, name, want, rest)
}

// previewContent is the check run of a preview; accepted is the acceptance already recorded on
// the head commit's check run, which holds while the change still exceeds the guard.
func previewContent(pr PullRequest, p *Preview, accepted string, failure error) (checkContent, []*github.CheckRunAnnotation) {
	if failure != nil || p.Proposed == nil {
		msg := "the preview could not be computed"
		if failure != nil {
			msg = failure.Error()
		}
		return checkContent{Conclusion: "failure", Title: "could not preview " + p.Env.Name, Summary: truncate("**Error:** "+msg+"\n", maxOutputText)}, nil
	}
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
	annotations, others := annotate(c, &Outcome{Env: p.Env, Result: p.Proposed}, nil)
	summary := previewSummary(p)
	var actions []*github.CheckRunAction
	if len(p.Violations) > 0 && accepted != "" {
		summary = accepted + "\n\n" + summary
		p = acceptedPreview(p)
	} else if len(p.Violations) > 0 {
		actions = acceptButton()
		summary = "A user with write permission on " + p.Env.ControlPlane.String() + " can accept this blast radius with the Accept button.\n\n" + summary
	}
	summary = truncate(summary, maxOutputText)
	hint := fmt.Sprintf("To see everything, run `kalypso plan --diff` for environment %s with the pull request's branch checked out.", p.Env.Name)
	budget := preview.MaxCheckRunText - len(others) - 64
	text := others + preview.Markdown(preview.Sections(p.Plan, p.Prev, p.Next, p.Proposed.Root), budget, hint)
	return checkContent{Conclusion: PreviewConclusion(p, own, nil), Title: previewTitle(p), Summary: summary, Text: text,
		Annotations: len(annotations), Actions: actions}, annotations
}

// acceptedPreview is p with its violations accepted: they no longer fail it.
func acceptedPreview(p *Preview) *Preview {
	cp := *p
	cp.Violations = nil
	return &cp
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

// previewSummary gives the guard's verdict, then the assignments added, changed and removed
// per cluster type.
func previewSummary(p *Preview) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Environment **%s**, pull request read as `%s`: %s added, %d changed, %d removed of %d; %s touched of %d.\n\n",
		p.Env.Name, p.Read, plural.Count(p.Blast.Added, "assignment"), p.Blast.Changed, p.Blast.Removed, p.Blast.Assignments,
		plural.Count(p.Blast.Touched, "cluster type"), p.Blast.ClusterTypes)
	b.WriteString(violationLines(p.Violations))
	if n := len(p.Proposed.Errors); n > 0 {
		fmt.Fprintf(&b, "%s; those in the pull request's files are annotated.\n\n", plural.Count(n, "error"))
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
