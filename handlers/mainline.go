package handlers

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// workMain validates the current head of a control plane's main against every environment
// (a check run per environment on it) and, when it is valid everywhere, pins it into the first
// environments of the promotion chain — only forward: a head that is not ahead of a pin
// changes nothing there (see promote.Promoter.Pin). An event for an older commit therefore
// validates and pins the newest one, whichever replica and in whatever order.
func (c *Core) workMain(ctx context.Context, inst int64, cp envref.Repo, reports Reports) error {
	head, err := c.Reconciler.MainHead(ctx, inst, cp)
	if err != nil || head == "" {
		return err
	}
	envs, err := c.Index.Matching(ctx, inst, func(e envref.EnvInfo) bool { return e.Env.ControlPlane == cp })
	if err != nil {
		return err
	}
	commit := reconcile.BranchCommit(inst, cp, gitsource.MainBranch, head)
	commit.Rerun = reports[envref.RepoBranch{Repo: cp, Branch: gitsource.MainBranch}]
	valid, err := c.validateEnvs(ctx, envs, commit)
	if err != nil || !valid {
		return err
	}
	return c.Promoter.PromoteMain(ctx, promote.Locator{Installation: inst, ControlPlane: cp, Commit: head})
}

// validateEnvs renders environments with main at a commit and reports a check run for each on
// it; it tells whether the commit is valid in every one. A validation that cannot be computed
// is retried; the last attempt reports it as failed.
func (c *Core) validateEnvs(ctx context.Context, envs []envref.EnvInfo, commit reconcile.Commit) (bool, error) {
	commit = commit.AsMain()
	_, last := workq.Attempt(ctx)
	valid := true
	for _, e := range envs {
		out, err := c.Reconciler.Validate(ctx, e.Env, commit.SHA)
		if out == nil {
			out = &reconcile.Outcome{Env: e.Env}
		}
		logOutcome(ctx, out, err, last)
		if err != nil && !last {
			return false, fmt.Errorf("validate main %s in %s: %w", commit.SHA, e.Env.Name, err)
		}
		valid = valid && err == nil && out.Result != nil && len(out.Result.Errors) == 0
		if rerr := c.Reconciler.Report(ctx, commit, out, err); rerr != nil {
			return false, rerr
		}
	}
	if !valid {
		zerolog.Ctx(ctx).Info().Str("main", commit.SHA).Msg("main is not valid in every environment: not promoted")
	}
	return valid, nil
}
