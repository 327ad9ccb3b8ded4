package reconcile

import (
	"context"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// ReportPreviewRefused completes the preview check run of one environment on the pull
// request's head commit as neutral, saying why no preview was computed (for example its
// author's budget of previews is used up).
func (r *Reconciler) ReportPreviewRefused(ctx context.Context, pr PullRequest, env envref.Env, title, why string) (*github.CheckRun, error) {
	gh, err := r.clients.Client(ctx, pr.Installation)
	if err != nil {
		return nil, err
	}
	name, externalID := PreviewCheckName(env.Name), PreviewExternalID(env.ControlPlane, env.Name)
	unlock := r.lockReports(pr.Repo, "preview\x00"+env.Name)
	defer unlock()
	existing, err := ghport.FindCheckRun(ctx, gh, pr.Repo, pr.HeadSHA, name, externalID)
	if err != nil {
		return nil, err
	}
	want := checkContent{Conclusion: "neutral", Title: title, Summary: truncate(why, maxOutputText)}
	c := Commit{Installation: pr.Installation, Repo: pr.Repo, SHA: pr.HeadSHA}
	run, _, err := r.writeCheckRun(ctx, gh, c, name, externalID, existing, want, nil)
	return run, err
}
