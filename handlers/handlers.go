// Package handlers turns GitHub webhooks into reconcile requests; one file per event.
package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
)

// Core is what the handlers share: the reconciler, the repository index and the promoter.
type Core struct {
	Reconciler *reconcile.Reconciler
	Index      *reconcile.Index
	Promoter   *promote.Promoter
}

// reconcileAndReport reconciles environments and reports each on a commit when one is given.
func (c *Core) reconcileAndReport(ctx context.Context, envs []reconcile.EnvInfo, commit *reconcile.Commit) error {
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
		if commit != nil && out.Result != nil || commit != nil && err != nil {
			if rerr := c.Reconciler.Report(ctx, *commit, out, err); rerr != nil {
				errs = append(errs, rerr)
			}
		}
	}
	return errors.Join(errs...)
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
