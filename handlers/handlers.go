// Package handlers turns GitHub webhooks into reconcile requests; one file per event.
package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-github/v62/github"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
)

// Reconciler computes environments and reports them on commits (see reconcile.Reconciler).
type Reconciler interface {
	Environment(ctx context.Context, env envref.Env) (*reconcile.Outcome, error)
	Validate(ctx context.Context, env envref.Env, main string) (*reconcile.Outcome, error)
	Report(ctx context.Context, c reconcile.Commit, out *reconcile.Outcome, failure error) error
}

// Index knows the environments of each installation (see envref.Index).
type Index interface {
	Declared(repo envref.Repo) bool
	Environments(ctx context.Context, inst int64) ([]envref.EnvInfo, error)
	Matching(ctx context.Context, inst int64, keep func(envref.EnvInfo) bool) ([]envref.EnvInfo, error)
	IsControlPlane(ctx context.Context, inst int64, repo envref.Repo) (bool, error)
	Refresh(ctx context.Context, inst int64, repo envref.Repo) error
	Forget(inst int64)
}

// Promoter runs promotions (see promote.Promoter).
type Promoter interface {
	PromoteMain(ctx context.Context, main promote.Locator) error
	Approve(ctx context.Context, inst int64, repo envref.Repo, event *github.CheckRun, user string) error
	Merged(ctx context.Context, inst int64, gitops envref.Repo, pr *github.PullRequest) error
	Resume(ctx context.Context, inst int64) error
	Wake()
}

// Previewer previews pull requests (see reconcile.Reconciler.Preview).
type Previewer interface {
	Preview(ctx context.Context, env envref.Env, pr reconcile.PullRequest, as reconcile.PreviewTarget) (*reconcile.Preview, error)
	ReportPreview(ctx context.Context, pr reconcile.PullRequest, env envref.Env, p *reconcile.Preview, failure error) (*github.CheckRun, error)
	CommentPreviews(ctx context.Context, pr reconcile.PullRequest, lines []reconcile.PreviewLine) error
	AcceptBlastRadius(ctx context.Context, inst int64, repo envref.Repo, run *github.CheckRun, user string) (*reconcile.Acceptance, error)
	Audience(ctx context.Context, pr reconcile.PullRequest) reconcile.Audience
	ReadPullRequest(ctx context.Context, inst int64, repo envref.Repo, number int) (reconcile.PullRequest, bool, error)
	ApproveFullPreview(ctx context.Context, inst int64, repo envref.Repo, run *github.CheckRun, user string) (*reconcile.Approval, error)
}

// Core is what the handlers share: the reconciler, the repository index and the promoter, and
// the previewer of pull requests (nil: pull requests are not previewed), which also keeps one
// comment per pull request when PreviewComments is set.
type Core struct {
	Reconciler      Reconciler
	Index           Index
	Promoter        Promoter
	Previews        Previewer
	PreviewComments bool
}

// reconcileAndReport reconciles environments and reports each on a commit when one is given.
func (c *Core) reconcileAndReport(ctx context.Context, envs []envref.EnvInfo, commit *reconcile.Commit) error {
	var errs []error
	for _, e := range envs {
		out, err := c.Reconciler.Environment(ctx, e.Env)
		if out == nil {
			out = &reconcile.Outcome{Env: e.Env}
		}
		logOutcome(ctx, out, err)
		if err != nil {
			errs = append(errs, fmt.Errorf("environment %s of %s: %w", e.Env.Name, e.Env.ControlPlane, err))
		}
		if commit != nil && (out.Result != nil || err != nil) {
			if rerr := c.Reconciler.Report(ctx, *commit, out, err); rerr != nil {
				errs = append(errs, rerr)
			}
		}
		// A held change is offered for acceptance on the environment branch's head commit,
		// whatever triggered it (a workload push, a resync).
		if held := reconcile.HeldOn(out); held != nil && (commit == nil || commit.Repo != held.Repo || commit.SHA != held.SHA) {
			if rerr := c.Reconciler.Report(ctx, *held, out, nil); rerr != nil {
				errs = append(errs, rerr)
			}
		}
	}
	return errors.Join(errs...)
}

// validateEnvs renders environments with main at a commit and reports a check run for each on
// it; it tells whether the commit is valid in every one.
func (c *Core) validateEnvs(ctx context.Context, envs []envref.EnvInfo, commit reconcile.Commit) (bool, error) {
	commit = commit.AsMain()
	valid := true
	for _, e := range envs {
		out, err := c.Reconciler.Validate(ctx, e.Env, commit.SHA)
		if out == nil {
			out = &reconcile.Outcome{Env: e.Env}
		}
		logOutcome(ctx, out, err)
		valid = valid && err == nil && out.Result != nil && len(out.Result.Errors) == 0
		if rerr := c.Reconciler.Report(ctx, commit, out, err); rerr != nil {
			return false, rerr
		}
	}
	return valid, nil
}

func logOutcome(ctx context.Context, out *reconcile.Outcome, err error) {
	log := zerolog.Ctx(ctx).With().Str("environment", out.Env.Name).Str("control_plane", out.Env.ControlPlane.String()).Logger()
	if err != nil {
		log.Error().Err(err).Msg("reconcile failed")
		return
	}
	ev := log.Info()
	if out.Result != nil {
		ev = ev.Int("assignments", len(out.Result.Outputs)).Int("errors", len(out.Result.Errors))
	}
	if out.PR != nil {
		ev = ev.Int("pull_request", out.PR.GetNumber())
	}
	ev.Str("commit", out.Commit).Msg("environment reconciled")
}

// Resync reconciles every environment of every installation: a missed webhook changes nothing.
func (c *Core) Resync(ctx context.Context, installations []int64) error {
	var errs []error
	for _, inst := range installations {
		c.Index.Forget(inst)
		envs, err := c.Index.Environments(ctx, inst)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := c.reconcileAndReport(ctx, envs, nil); err != nil {
			errs = append(errs, err)
		}
		if err := c.Promoter.Resume(ctx, inst); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// repoOf names the repository of an event.
func repoOf(r *github.Repository) envref.Repo {
	repo := envref.Repo{Owner: r.GetOwner().GetLogin(), Name: r.GetName()}
	if repo.Owner == "" { // push events name the owner, not its login
		repo.Owner = r.GetOwner().GetName()
	}
	return repo
}
