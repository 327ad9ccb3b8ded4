package reconcile

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envcheck"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/plural"
)

// GitHub's limits on check runs.
const (
	maxAnnotationsPerRequest = 50
	maxOutputText            = 65000
)

// maxAnnotations is how many errors a check run shows as annotations: those that one request
// carries, so that reporting costs the same few REST calls whatever the number of errors. The
// others are listed in the run's text.
const maxAnnotations = maxAnnotationsPerRequest

// Commit is a pushed commit a check run is reported on.
type Commit struct {
	Installation int64
	Repo         envref.Repo
	Branch       string
	SHA          string
	// Prefixes are the position prefixes of files that belong to this commit, so that errors
	// in them become annotations (e.g. "dev:" or "main@4a0821c:").
	Prefixes []string
	// Rerun is set when a user asked to run the check again: it gets a new check run.
	Rerun bool
}

// BranchCommit is a commit pushed to a branch of repo: errors in the files of that branch,
// read as an environment branch or as a workload branch, are its own.
func BranchCommit(inst int64, repo envref.Repo, branch, sha string) Commit {
	return Commit{Installation: inst, Repo: repo, Branch: branch, SHA: sha,
		Prefixes: []string{branch + ":", WorkloadPrefix(repo, branch)}}
}

// AsMain is the commit validated as main of its control plane: errors in main's files at
// that commit are its own.
func (c Commit) AsMain() Commit {
	c.Prefixes = []string{gitsource.MainPrefix(c.SHA)}
	return c
}

// CheckName is the name of an environment's check run (envcheck.Name).
func CheckName(env string) string { return envcheck.Name(env) }

// CheckExternalID identifies an environment's check run across restarts (envcheck.ExternalID).
func CheckExternalID(controlPlane envref.Repo, env string) string {
	return envcheck.ExternalID(controlPlane, env)
}

// ParseExternalID reads back the control plane and environment of a check run.
func ParseExternalID(id string) (envref.Repo, string, bool) { return envcheck.ParseExternalID(id) }

// Report posts one completed check run for an environment's outcome on a commit. The check
// run of the environment already on the commit is updated, or left alone when it already says
// the same, so that replayed events do not pile up check runs; a re-run asked for by a user
// gets a new one.
func (r *Reconciler) Report(ctx context.Context, c Commit, out *Outcome, failure error) error {
	gh, err := r.clients.Client(ctx, c.Installation)
	if err != nil {
		return err
	}
	annotations, text := annotate(c, out, failure)
	conclusion := conclusionOf(c, out, failure)
	want := checkContent{Conclusion: conclusion, Title: checkTitle(out, failure),
		Summary: truncate(checkSummary(out, failure), maxOutputText), Text: truncate(text, maxOutputText), Annotations: len(annotations)}
	if len(out.Held) > 0 && failure == nil && c.Repo == out.Env.ControlPlane && c.SHA == envCommit(out) {
		want.Actions = acceptButton()
	}
	name, externalID := CheckName(out.Env.Name), CheckExternalID(out.Env.ControlPlane, out.Env.Name)
	unlock := r.lockReports(c.Repo, out.Env.Name)
	defer unlock()
	var existing *github.CheckRun
	if !c.Rerun {
		if existing, err = ghport.FindCheckRun(ctx, gh, c.Repo, c.SHA, name, externalID); err != nil {
			return err
		}
	}
	want.Summary = keepRecords(want.Summary, existing)
	want = keepHold(want, existing)
	run, rest, err := r.writeCheckRun(ctx, gh, c, name, externalID, existing, want, annotations)
	if err != nil {
		return err
	}
	return addAnnotations(ctx, gh, c.Repo, run, name, want, rest)
}

// writeCheckRun creates, updates or keeps the check run; it returns the annotations still to add.
func (r *Reconciler) writeCheckRun(ctx context.Context, gh ghport.GitHub, c Commit, name, externalID string,
	existing *github.CheckRun, want checkContent, annotations []*github.CheckRunAnnotation) (*github.CheckRun, []*github.CheckRunAnnotation, error) {
	output := &github.CheckRunOutput{Title: &want.Title, Summary: &want.Summary, Text: &want.Text}
	switch action, withAnnotations := reuseCheckRun(existing, want); {
	case action == keepRun:
		return existing, nil, nil
	case action == updateRun:
		if !withAnnotations {
			annotations = nil
		}
		first := min(len(annotations), maxAnnotationsPerRequest)
		output.Annotations = annotations[:first]
		run, err := gh.UpdateCheckRun(ctx, c.Repo, existing.GetID(), github.UpdateCheckRunOptions{
			Name: name, Status: github.String("completed"), Conclusion: &want.Conclusion, Output: output, Actions: want.Actions})
		if err != nil {
			return nil, nil, fmt.Errorf("update check run %d on %s@%s: %w", existing.GetID(), c.Repo, c.SHA, err)
		}
		return run, annotations[first:], nil
	}
	first := min(len(annotations), maxAnnotationsPerRequest)
	output.Annotations = annotations[:first]
	run, err := gh.CreateCheckRun(ctx, c.Repo, github.CreateCheckRunOptions{
		Name: name, HeadSHA: c.SHA, Status: github.String("completed"), Conclusion: &want.Conclusion,
		ExternalID: github.String(externalID), Output: output, Actions: want.Actions})
	if err != nil {
		return nil, nil, fmt.Errorf("create check run on %s@%s: %w", c.Repo, c.SHA, err)
	}
	return run, annotations[first:], nil
}

// addAnnotations adds annotations to a check run in batches of GitHub's maximum.
func addAnnotations(ctx context.Context, gh ghport.GitHub, repo envref.Repo, run *github.CheckRun, name string, want checkContent, annotations []*github.CheckRunAnnotation) error {
	for i := 0; i < len(annotations); i += maxAnnotationsPerRequest {
		batch := annotations[i:min(i+maxAnnotationsPerRequest, len(annotations))]
		_, err := gh.UpdateCheckRun(ctx, repo, run.GetID(), github.UpdateCheckRunOptions{
			Name: name, Output: &github.CheckRunOutput{Title: &want.Title, Summary: &want.Summary, Annotations: batch}})
		if err != nil {
			return fmt.Errorf("add annotations to check run %d: %w", run.GetID(), err)
		}
	}
	return nil
}

// conclusionOf fails a control-plane commit on any error of its environment (the platform
// team owns every control-plane file), but a workload commit only on errors in its own files:
// one team's broken files never turn another team's checks red.
func conclusionOf(c Commit, out *Outcome, failure error) string {
	if failure != nil || len(out.Held) > 0 {
		return "failure"
	}
	for _, e := range out.Result.Errors {
		if _, own := ownPath(c, e.Pos.File); own || c.Repo == out.Env.ControlPlane {
			return "failure"
		}
	}
	return "success"
}

func checkTitle(out *Outcome, failure error) string {
	switch {
	case failure != nil:
		return "could not reconcile " + out.Env.Name
	case len(out.Held) > 0:
		return out.Env.Name + ": held by the blast-radius guard"
	case len(out.Result.Errors) > 0:
		return fmt.Sprintf("%s in %s", plural.Count(len(out.Result.Errors), "error"), out.Env.Name)
	case out.PR != nil:
		return fmt.Sprintf("%s: %s, pull request #%d", out.Env.Name, plural.Count(out.Result.Outputs.Len(), "assignment"), out.PR.GetNumber())
	}
	return fmt.Sprintf("%s: %s, GitOps branch up to date", out.Env.Name, plural.Count(out.Result.Outputs.Len(), "assignment"))
}

func checkSummary(out *Outcome, failure error) string {
	var b strings.Builder
	if failure != nil {
		fmt.Fprintf(&b, "**Error:** %s\n\n", failure)
	}
	if out.Accepted != "" {
		b.WriteString(out.Accepted + "\n\n")
	}
	if len(out.Held) > 0 {
		fmt.Fprintf(&b, "**Held change** `%s`\n\n", changeDigest(out))
		b.WriteString(violationLines(out.Held))
		fmt.Fprintf(&b, "The change is not pushed into the GitOps pull request until a user with write permission on %s accepts it with the Accept button of the check run on %s's head commit %s.\n\n",
			out.Env.ControlPlane, out.Env.Name, envCommit(out))
	}
	if out.Result != nil {
		fmt.Fprintf(&b, "Environment **%s**: %s rendered, %d failed, %s.\n\n",
			out.Env.Name, plural.Count(out.Result.Outputs.Len(), "assignment"), len(out.Result.Failed), plural.Count(len(out.Result.Errors), "error"))
	}
	if out.PR != nil {
		fmt.Fprintf(&b, "Pull request: [%s#%d](%s)\n\n", out.GitOps, out.PR.GetNumber(), out.PR.GetHTMLURL())
	}
	if out.Plan != nil {
		b.WriteString(PlanMarkdown(out.Plan))
	}
	return b.String()
}

// annotate turns errors in the commit's own files into annotations, at most maxAnnotations of
// them; the others go to the text.
func annotate(c Commit, out *Outcome, failure error) ([]*github.CheckRunAnnotation, string) {
	var anns []*github.CheckRunAnnotation
	var text, more strings.Builder
	if out.Result == nil {
		return nil, ""
	}
	skipped := 0
	for _, e := range out.Result.Errors {
		if path, ok := ownPath(c, e.Pos.File); ok && path != "" {
			if len(anns) == maxAnnotations {
				skipped++
				fmt.Fprintf(&more, "- `%s`\n", e)
				continue
			}
			msg := e.Msg
			if e.Object != "" {
				msg = e.Object + ": " + msg
			}
			line := max(e.Pos.Line, 1) // an error about a whole file (too large, unreadable) is shown on its first line
			anns = append(anns, &github.CheckRunAnnotation{Path: github.String(path), StartLine: github.Int(line),
				EndLine: github.Int(line), AnnotationLevel: github.String("failure"), Message: github.String(msg)})
			continue
		}
		fmt.Fprintf(&text, "- `%s`\n", e)
	}
	var out2 strings.Builder
	if skipped > 0 {
		fmt.Fprintf(&out2, "%s beyond the first %d, which are annotations:\n\n%s\n", plural.Count(skipped, "more error"), maxAnnotations, more.String())
	}
	if text.Len() > 0 {
		out2.WriteString("Errors in other repositories or branches:\n\n" + text.String())
	}
	return anns, out2.String()
}

func ownPath(c Commit, file string) (string, bool) {
	for _, p := range c.Prefixes {
		if rest, ok := strings.CutPrefix(file, p); ok {
			return rest, true
		}
	}
	return "", false
}
