package handlers

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/google/go-github/v62/github"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
)

var commitSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// wantsPreview reports whether an event asks for a new preview: an open pull request opened,
// reopened, pushed to, or moved to another base. Closed ones get nothing more.
func wantsPreview(ev *github.PullRequestEvent) bool {
	if ev.GetPullRequest().GetState() != "open" {
		return false
	}
	switch ev.GetAction() {
	case "opened", "synchronize", "reopened":
		return true
	case "edited":
		return ev.GetChanges().GetBase() != nil
	}
	return false
}

// preview previews an open pull request: into an environment branch of a declared control
// plane, that environment; into its main, every environment of the control plane as if main
// were pinned at the pull request's result; into a registered branch of a workload
// repository, every environment that reads it. One check run per environment on the head commit.
func (h PullRequest) preview(ctx context.Context, ev *github.PullRequestEvent) error {
	repo, pr := repoOf(ev.GetRepo()), ev.GetPullRequest()
	if h.Previews == nil {
		return nil
	}
	head := pr.GetHead().GetSHA()
	if !commitSHA.MatchString(head) || pr.GetNumber() <= 0 {
		return fmt.Errorf("pull request #%d of %s: head %q is not a commit", pr.GetNumber(), repo, head)
	}
	inst := githubapp.GetInstallationIDFromEvent(ev)
	ctx, _ = githubapp.PrepareRepoContext(ctx, inst, ev.GetRepo())
	req := reconcile.PullRequestOf(inst, repo, pr)
	as := previewTarget(h.Index.Declared(repo), req.Base)
	envs, err := h.Index.Matching(ctx, inst, func(e envref.EnvInfo) bool {
		if as == reconcile.AsWorkload {
			return e.ReadsWorkload(repo, req.Base)
		}
		return e.Env.ControlPlane == repo && (as == reconcile.AsMain || e.Branch == req.Base)
	})
	if err != nil || len(envs) == 0 {
		return err
	}
	req.Audience = h.Previews.Audience(ctx, req)
	var errs []error
	var lines []reconcile.PreviewLine
	for _, e := range envs {
		p, err := h.Previews.Preview(ctx, e.Env, req, as)
		if err != nil {
			zerolog.Ctx(ctx).Error().Err(err).Str("environment", e.Env.Name).Int("pull_request", req.Number).Msg("preview failed")
		}
		run, rerr := h.Previews.ReportPreview(ctx, req, e.Env, p, err)
		if rerr != nil {
			errs = append(errs, fmt.Errorf("preview of %s: %w", e.Env.Name, rerr))
			continue
		}
		lines = append(lines, reconcile.PreviewLine{Env: e.Env.Name, Conclusion: run.GetConclusion(), Title: run.GetOutput().GetTitle(), URL: run.GetHTMLURL()})
	}
	if h.PreviewComments && len(lines) > 0 {
		if err := h.Previews.CommentPreviews(ctx, req, lines); err != nil {
			errs = append(errs, fmt.Errorf("preview comment: %w", err))
		}
	}
	return errors.Join(errs...)
}

// previewTarget says what a pull request into base is previewed as.
func previewTarget(controlPlane bool, base string) reconcile.PreviewTarget {
	switch {
	case !controlPlane:
		return reconcile.AsWorkload
	case base == gitsource.MainBranch:
		return reconcile.AsMain
	}
	return reconcile.AsEnvironmentBranch
}

// rerunPreview previews again, on a click on "Re-run", the open pull requests the check run
// is for (GitHub lists only those of the same repository, not those from forks).
func (h CheckRun) rerunPreview(ctx context.Context, ev *github.CheckRunEvent, plane envref.Repo, env string) error {
	run := ev.GetCheckRun()
	var errs []error
	for _, pr := range run.PullRequests {
		if pr.GetNumber() > 0 && pr.GetHead().GetSHA() == run.GetHeadSHA() {
			errs = append(errs, h.previewAgain(ctx, ev, plane, env, pr.GetNumber()))
		}
	}
	return errors.Join(errs...)
}

// previewAgain previews one environment of a pull request again, as GitHub has the pull request
// now, while it is open and its head is still the check run's commit.
func (h CheckRun) previewAgain(ctx context.Context, ev *github.CheckRunEvent, plane envref.Repo, env string, number int) error {
	run, repo := ev.GetCheckRun(), repoOf(ev.GetRepo())
	if h.Previews == nil || !commitSHA.MatchString(run.GetHeadSHA()) {
		return nil
	}
	inst := githubapp.GetInstallationIDFromEvent(ev)
	ctx, _ = githubapp.PrepareRepoContext(ctx, inst, ev.GetRepo())
	envs, err := h.Index.Matching(ctx, inst, func(e envref.EnvInfo) bool { return e.Env.ControlPlane == plane && e.Env.Name == env })
	if err != nil || len(envs) == 0 {
		return err
	}
	req, open, err := h.Previews.ReadPullRequest(ctx, inst, repo, number)
	if err != nil || !open || req.HeadSHA != run.GetHeadSHA() {
		return err
	}
	req.Audience = h.Previews.Audience(ctx, req)
	p, err := h.Previews.Preview(ctx, envs[0].Env, req, previewTarget(h.Index.Declared(repo), req.Base))
	_, err = h.Previews.ReportPreview(ctx, req, envs[0].Env, p, err)
	return err
}
