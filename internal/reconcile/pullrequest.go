package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/plural"

	"github.com/kalypso-gitops/kalypso/render"
)

// PromotedLabel marks a pull request that changes the promoted commit, as the reference does.
const PromotedLabel = "promoted"

// maxBody keeps a pull request body within GitHub's limit.
const maxBody = 60000

// commitMessage names the environment and, as trailers, every source commit it came from.
func commitMessage(out *Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Kalypso: update environment %s\n\n", out.Env.Name)
	fmt.Fprintf(&b, "Kalypso-Environment: %s\n", out.Env.Name)
	fmt.Fprintf(&b, "Kalypso-Control-Plane: %s\n", out.Env.ControlPlane)
	for _, s := range out.Sources {
		fmt.Fprintf(&b, "Kalypso-Source: %s %s\n", s.Name, s.Commit)
	}
	return b.String()
}

func prTitle(out *Outcome) string {
	return fmt.Sprintf("Kalypso: update %s from %s", out.Base, out.Env.ControlPlane)
}

// prBody summarises the changes per cluster type, the source commits and the errors.
func prBody(out *Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This PR updates the manifests of environment **%s** in GitOps branch `%s`.\n\n", out.Env.Name, out.Base)
	b.WriteString(PlanMarkdown(out.Plan))
	b.WriteString("\n### Sources\n\n")
	for _, s := range out.Sources {
		fmt.Fprintf(&b, "- %s `%s`\n", s.Name, s.Commit)
	}
	if errs := out.Result.Errors; len(errs) > 0 {
		fmt.Fprintf(&b, "\n### %s (the affected assignments keep their last good manifests)\n\n", plural.Count(len(errs), "error"))
		for _, e := range errs {
			fmt.Fprintf(&b, "- `%s`\n", e)
		}
	}
	return truncate(b.String(), maxBody)
}

// maxPlanRows bounds the bytes of the table of PlanMarkdown: the rows past it are counted, not
// listed, so that a plan of many assignments costs no more than what is shown.
const maxPlanRows = 40000

// PlanMarkdown lists assignments added, changed and removed, per cluster type.
func PlanMarkdown(p *render.Plan) string {
	if p == nil || p.Empty() {
		return "No changes.\n"
	}
	var b strings.Builder
	a, c, r := p.Count()
	fmt.Fprintf(&b, "%s added, %d changed, %d removed.\n", plural.Count(a, "file"), c, r)
	if len(p.Groups) > 0 {
		b.WriteString("\n| cluster type | assignment | added | changed | removed |\n|---|---|---|---|---|\n")
	}
	table := b.Len()
	for i, g := range p.Groups {
		if b.Len()-table > maxPlanRows {
			fmt.Fprintf(&b, "\n… and %s not listed.\n", plural.Count(len(p.Groups)-i, "more row"))
			break
		}
		var n [3]int
		for _, ch := range g.Changes {
			switch ch.Kind {
			case render.Added:
				n[0]++
			case render.Changed:
				n[1]++
			case render.Removed:
				n[2]++
			}
		}
		name := g.Assignment
		if name == "" {
			name = "(cluster type files)"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d |\n", g.ClusterType, name, n[0], n[1], n[2])
	}
	if len(p.Other) > 0 {
		b.WriteString("\n")
	}
	for _, o := range p.Other {
		fmt.Fprintf(&b, "- `%s` %s\n", o.Path, o.Kind)
	}
	return b.String()
}

// truncate cuts text to at most n bytes on a line boundary, with a note; a text without line
// breaks is cut at the start of a UTF-8 character.
func truncate(text string, n int) string {
	if len(text) <= n {
		return text
	}
	cut := strings.LastIndex(text[:n-200], "\n")
	if cut < 0 {
		cut = n - 200
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
	}
	return text[:cut] + fmt.Sprintf("\n\n… truncated: %d more characters not shown.\n", len(text)-cut)
}

func (r *Reconciler) findPR(ctx context.Context, out *Outcome, branch string) (*github.PullRequest, error) {
	gh, err := r.clients.Client(ctx, out.Env.Installation)
	if err != nil {
		return nil, err
	}
	prs, err := gh.OpenPullRequests(ctx, out.GitOps, branch, out.Base)
	if err != nil {
		return nil, fmt.Errorf("list pull requests of %s: %w", out.GitOps, err)
	}
	for _, pr := range prs {
		if pr.GetHead().GetRef() == branch {
			return pr, nil
		}
	}
	return nil, nil
}

// ensurePR opens the environment's pull request or updates it in place.
func (r *Reconciler) ensurePR(ctx context.Context, out *Outcome, branch string) error {
	gh, err := r.clients.Client(ctx, out.Env.Installation)
	if err != nil {
		return err
	}
	pr, err := r.findPR(ctx, out, branch)
	if err != nil {
		return err
	}
	if head := pr.GetHead().GetSHA(); pr != nil && head != "" && head != out.Commit {
		// Another writer moved the branch after this reconcile pushed: its pull request text
		// is that writer's to write; this reconcile reads the state again.
		return fmt.Errorf("pull request #%d of %s shows head %s, not %s: %w", pr.GetNumber(), branch, short(head), short(out.Commit), gitcache.ErrStale)
	}
	title, body := prTitle(out), prBody(out)
	switch {
	case pr == nil:
		pr, err = gh.CreatePullRequest(ctx, out.GitOps, &github.NewPullRequest{
			Title: &title, Body: &body, Head: &branch, Base: &out.Base, MaintainerCanModify: github.Bool(true)})
		if errors.Is(err, ghport.ErrPullRequestExists) { // another replica opened it first: the next reconcile updates it
			if pr, err = r.findPR(ctx, out, branch); err == nil && pr == nil {
				err = fmt.Errorf("pull request for %s reported as existing but not found", branch)
			}
		}
		if err != nil {
			return fmt.Errorf("open pull request on %s: %w", out.GitOps, err)
		}
	case pr.GetTitle() != title || pr.GetBody() != body:
		number := pr.GetNumber()
		if pr, err = gh.EditPullRequest(ctx, out.GitOps, number, &github.PullRequest{Title: &title, Body: &body}); err != nil {
			return fmt.Errorf("update pull request #%d on %s: %w", number, out.GitOps, err)
		}
	}
	out.PR = pr
	if out.Promoted && !hasLabel(pr, PromotedLabel) {
		if err := gh.AddLabels(ctx, out.GitOps, pr.GetNumber(), []string{PromotedLabel}); err != nil {
			return fmt.Errorf("label pull request #%d on %s: %w", pr.GetNumber(), out.GitOps, err)
		}
	}
	return nil
}

func hasLabel(pr *github.PullRequest, name string) bool {
	for _, l := range pr.Labels {
		if l.GetName() == name {
			return true
		}
	}
	return false
}

func (r *Reconciler) closePR(ctx context.Context, out *Outcome, pr *github.PullRequest) error {
	gh, err := r.clients.Client(ctx, out.Env.Installation)
	if err != nil {
		return err
	}
	_, err = gh.EditPullRequest(ctx, out.GitOps, pr.GetNumber(), &github.PullRequest{State: github.String("closed")})
	if err != nil && !errors.Is(err, ghport.ErrNotFound) {
		return fmt.Errorf("close pull request #%d on %s: %w", pr.GetNumber(), out.GitOps, err)
	}
	return nil
}
