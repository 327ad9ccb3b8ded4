package handlers

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// Resync makes every kind of work of every installation due, so that whatever a lost,
// refused or failed event left undone is done: the resync is work of the same queue (the
// caller's context carries its round). It runs in one replica per installation at a time:
// the one that holds the lease resync/<installation> (see workInstallations).
func (c *Core) Resync(ctx context.Context) error {
	return c.Queue.Add(ctx, InstallationsKey(), nil)
}

// ResyncLease names the lease a replica holds while it resyncs an installation.
func ResyncLease(inst int64) string { return fmt.Sprintf("resync/%d", inst) }

// workInstallations lists the App's installations and resyncs each one whose lease this
// replica gets; another replica resyncs the others.
func (c *Core) workInstallations(ctx context.Context) error {
	ids, err := c.Installations(ctx)
	if err != nil {
		return err
	}
	for _, inst := range ids {
		if c.Leases != nil {
			held, err := c.Leases.TryAcquire(ctx, ResyncLease(inst), c.Holder, c.ResyncTTL)
			if err != nil {
				return fmt.Errorf("lease %s: %w", ResyncLease(inst), err)
			}
			if !held {
				zerolog.Ctx(ctx).Info().Int64("installation", inst).Msg("another replica resyncs this installation")
				continue
			}
		}
		if err := c.Queue.Add(ctx, IndexKey(inst), IndexNeed{Resync: true}); err != nil {
			return err
		}
	}
	return nil
}

// workIndex reads an installation's repositories again and, for a resync, makes every key of
// it due: main of each control plane (validated and pinned when it was not), each environment
// with a check run on the head of every branch it reads (its branch and its workload
// branches: those whose check run was lost get it), and each promotion (a wait, an automatic
// promotion or a Promote button that was lost is taken up again).
func (c *Core) workIndex(ctx context.Context, inst int64, need IndexNeed) error {
	if err := c.Index.Rebuild(ctx, inst); err != nil {
		return err
	}
	if !need.Resync {
		return nil
	}
	envs, err := c.Index.Environments(ctx, inst)
	if err != nil {
		return err
	}
	planes := map[envref.Repo]bool{}
	for _, e := range envs {
		if !planes[e.Env.ControlPlane] {
			planes[e.Env.ControlPlane] = true
			if err := c.Queue.Add(ctx, MainKey(inst, e.Env.ControlPlane), ReportOn(e.Env.ControlPlane, gitsource.MainBranch, false)); err != nil {
				return err
			}
		}
		if err := c.Queue.Add(ctx, EnvironmentKey(e.Env), watched(e)); err != nil {
			return err
		}
		if err := c.Queue.Add(ctx, PromotionKey(e.Env), nil); err != nil {
			return err
		}
	}
	return nil
}

// watched is every branch an environment reads, each to get its check run.
func watched(e envref.EnvInfo) Reports {
	r := ReportOn(e.Env.ControlPlane, e.Branch, false)
	for _, w := range e.Workloads {
		r[w] = false
	}
	return r
}

// add adds work made due by a step that cannot fail for it (a promotion that pinned); a
// refusal is logged, and the resync makes it due again.
func (c *Core) add(ctx context.Context, key workq.Key, need workq.Need) {
	if err := c.Queue.Add(ctx, key, need); err != nil {
		zerolog.Ctx(ctx).Warn().Err(err).Str("work", key.String()).Msg("work not queued; the resync does it")
	}
}
