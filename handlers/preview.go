package handlers

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

var commitSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// workPreview previews an open pull request at its current head, read from GitHub (what it may
// show is decided by who opened it: see reconcile.Reconciler.Audience): heads
// pushed while it waited are never previewed, only the newest. Into an environment branch of
// a declared control plane, that environment; into its main, every environment of the control
// plane as if main were pinned at the pull request's result; into a registered branch of a
// workload repository, every environment that reads it. One check run per environment on the
// head commit. Previews run in their own lane, one at a time per pull request, and each author
// has a budget of previews per hour: beyond it, the check runs say so (neutral).
func (c *Core) workPreview(ctx context.Context, key workq.Key) error {
	if c.Previews == nil {
		return nil
	}
	repo := repoOfKey(key)
	number, err := strconv.Atoi(key.Name)
	if err != nil {
		return workq.Permanent(fmt.Errorf("preview key %s: %w", key, err))
	}
	req, open, err := c.Previews.ReadPullRequest(ctx, key.Inst, repo, number)
	if err != nil || !open {
		return err // closed ones get nothing more
	}
	if !commitSHA.MatchString(req.HeadSHA) {
		return workq.Permanent(fmt.Errorf("pull request #%d of %s: head %q is not a commit", number, repo, req.HeadSHA))
	}
	as := previewTarget(c.Index.Declared(repo), req.Base)
	envs, err := c.Index.Matching(ctx, key.Inst, func(e envref.EnvInfo) bool {
		if as == reconcile.AsWorkload {
			return e.ReadsWorkload(repo, req.Base)
		}
		return e.Env.ControlPlane == repo && (as == reconcile.AsMain || e.Branch == req.Base)
	})
	if err != nil || len(envs) == 0 {
		return err
	}
	if ok, next := c.PreviewBudget.Take(key.Inst, req.Author.Login); !ok {
		return c.refusePreview(ctx, req, envs, next)
	}
	req.Audience = c.Previews.Audience(ctx, req) // what the author may see, decided once per preview
	return c.preview(ctx, req, as, envs)
}

// preview computes and reports the previews of a pull request for envs, and sums them up in
// its comment. A preview that cannot be computed (its pull request's refs moved while they
// were fetched, GitHub failed) is tried again, reading the pull request anew; the last attempt
// reports the failure on its check run.
func (c *Core) preview(ctx context.Context, req reconcile.PullRequest, as reconcile.PreviewTarget, envs []envref.EnvInfo) error {
	_, last := workq.Attempt(ctx)
	var errs []error
	var lines []reconcile.PreviewLine
	for _, e := range envs {
		p, err := c.Previews.Preview(ctx, e.Env, req, as)
		if err != nil && !last {
			return fmt.Errorf("preview of %s: %w", e.Env.Name, err)
		}
		if err != nil {
			zerolog.Ctx(ctx).Error().Err(err).Str("environment", e.Env.Name).Int("pull_request", req.Number).Msg("preview failed")
		}
		run, rerr := c.Previews.ReportPreview(ctx, req, e.Env, p, err)
		if rerr != nil {
			errs = append(errs, fmt.Errorf("preview of %s: %w", e.Env.Name, rerr))
			continue
		}
		lines = append(lines, reconcile.PreviewLine{Env: e.Env.Name, Conclusion: run.GetConclusion(), Title: run.GetOutput().GetTitle(), URL: run.GetHTMLURL()})
	}
	if c.PreviewComments && len(lines) > 0 {
		if err := c.Previews.CommentPreviews(ctx, req, lines); err != nil {
			errs = append(errs, fmt.Errorf("preview comment: %w", err))
		}
	}
	return errors.Join(errs...)
}

// refusePreview says on each environment's preview check run that the author's budget of
// previews is used up, and when the next one is allowed.
func (c *Core) refusePreview(ctx context.Context, req reconcile.PullRequest, envs []envref.EnvInfo, next time.Time) error {
	login := req.Author.Login
	zerolog.Ctx(ctx).Warn().Str("author", login).Int("pull_request", req.Number).Time("next", next).Msg("preview refused: the author's previews of the last hour are used up")
	why := fmt.Sprintf("@%s has used up the previews allowed per author and hour (setting preview.perAuthorPerHour). "+
		"Nothing was computed for this commit; push again or use Re-run after %s.", login, next.UTC().Format(time.RFC3339))
	var errs []error
	for _, e := range envs {
		if _, err := c.Previews.ReportPreviewRefused(ctx, req, e.Env, "preview postponed: budget of @"+login+" used up", why); err != nil {
			errs = append(errs, fmt.Errorf("preview of %s: %w", e.Env.Name, err))
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
