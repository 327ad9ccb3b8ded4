package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// workEnvironment reconciles an environment from the current heads of its sources and
// reports its check run on the heads it read of the branches in reports. A burst of pushes
// to a branch coalesced into one run reports on its newest head only: the commits superseded
// before the run get no check run of the environment. A failed reconcile is retried; when it
// fails for good, the failure is reported on the heads the cache last saw.
func (c *Core) workEnvironment(ctx context.Context, env envref.Env, reports Reports) error {
	envs, err := c.Index.Matching(ctx, env.Installation, func(e envref.EnvInfo) bool { return e.Env == env })
	if err != nil || len(envs) == 0 {
		return err // an environment no longer declared has nothing to converge
	}
	out, err := c.Reconciler.Environment(ctx, env)
	if out == nil {
		out = &reconcile.Outcome{Env: env}
	}
	if refused(err) {
		err = workq.Permanent(err) // no retry changes who may write a GitOps branch
	}
	_, last := workq.Attempt(ctx)
	last = last || workq.IsPermanent(err)
	logOutcome(ctx, out, err, last)
	if err != nil {
		if last {
			c.reportFailure(ctx, out, reports, err)
		}
		return fmt.Errorf("environment %s of %s: %w", env.Name, env.ControlPlane, err)
	}
	for _, rb := range reports.sorted() {
		sha, ok := out.HeadRead(rb.Repo, rb.Branch)
		if !ok || out.Result == nil {
			continue
		}
		commit := reconcile.BranchCommit(env.Installation, rb.Repo, rb.Branch, sha)
		commit.Rerun = reports[rb]
		if err := c.Reconciler.Report(ctx, commit, out, nil); err != nil {
			return err
		}
	}
	// A held change is offered for acceptance on the environment branch's head commit,
	// whatever made it due (a workload push, a resync).
	if held := reconcile.HeldOn(out); held != nil && !reportedOn(out, reports, *held) {
		return c.Reconciler.Report(ctx, *held, out, nil)
	}
	return nil
}

// reportedOn reports whether the check run on commit was just reported for one of reports.
func reportedOn(out *reconcile.Outcome, reports Reports, commit reconcile.Commit) bool {
	for rb := range reports {
		if sha, ok := out.HeadRead(rb.Repo, rb.Branch); ok && rb.Repo == commit.Repo && sha == commit.SHA {
			return true
		}
	}
	return false
}

// refused reports whether a reconcile was refused for who the environment is (its GitOps
// branch belongs to another environment, or its control plane is not declared).
func refused(err error) bool {
	return errors.Is(err, envref.ErrClaimed) || errors.Is(err, envref.ErrUndeclared)
}

// reportFailure says on each branch head the cache last saw that the environment could not
// be reconciled.
func (c *Core) reportFailure(ctx context.Context, out *reconcile.Outcome, reports Reports, failure error) {
	for _, rb := range reports.sorted() {
		sha := c.Reconciler.CachedHead(rb.Repo, rb.Branch)
		if sha == "" {
			continue
		}
		commit := reconcile.BranchCommit(out.Env.Installation, rb.Repo, rb.Branch, sha)
		commit.Rerun = reports[rb]
		if err := c.Reconciler.Report(ctx, commit, out, failure); err != nil {
			zerolog.Ctx(ctx).Warn().Err(err).Str("environment", out.Env.Name).Msg("reporting a failed reconcile")
		}
	}
}

// logOutcome logs what reconciling or validating an environment found; a failure is an
// error only when no retry follows.
func logOutcome(ctx context.Context, out *reconcile.Outcome, err error, last bool) {
	log := zerolog.Ctx(ctx).With().Str("environment", out.Env.Name).Str("control_plane", out.Env.ControlPlane.String()).Logger()
	switch {
	case err != nil && last:
		log.Error().Err(err).Msg("reconcile failed")
		return
	case err != nil:
		log.Info().Err(err).Msg("reconcile attempt failed; it is retried")
		return
	}
	ev := log.Info()
	if out.Result != nil {
		ev = ev.Int("assignments", out.Result.Outputs.Len()).Int("errors", len(out.Result.Errors))
	}
	if out.PR != nil {
		ev = ev.Int("pull_request", out.PR.GetNumber())
	}
	ev.Str("commit", out.Commit).Msg("environment reconciled")
}
