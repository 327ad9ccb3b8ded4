package handlers

import (
	"context"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// workPromotion moves the promotion into an environment on (see promote.Promoter.Converge)
// and, while it waits for clusters or a soak time, runs again when it asks to.
func (c *Core) workPromotion(ctx context.Context, env envref.Env) error {
	envs, err := c.Index.Matching(ctx, env.Installation, func(e envref.EnvInfo) bool { return e.Env == env })
	if err != nil || len(envs) == 0 {
		return err
	}
	again, err := c.Promoter.Converge(ctx, envs[0])
	if err != nil {
		return err
	}
	workq.RequeueAfter(ctx, again)
	return nil
}

// Pinned implements promote.Scheduler: an environment's branch pins another main commit, so
// the environment is reconciled and its check run reported on that branch's head.
func (c *Core) Pinned(ctx context.Context, env envref.Env, branch string) {
	c.add(ctx, EnvironmentKey(env), ReportOn(env.ControlPlane, branch, false))
}

// Advance implements promote.Scheduler: the promotion into env may move on.
func (c *Core) Advance(ctx context.Context, env envref.Env) {
	c.add(ctx, PromotionKey(env), nil)
}
