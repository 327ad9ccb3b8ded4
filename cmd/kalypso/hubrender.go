package main

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/handlers"
	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// renderOnDemand makes this replica render an environment that a report names before the
// replica has rendered it: with replicas sharing the resync's lease, a replica renders only
// the environments its webhooks name, and the hub refuses such a report (503, retry) until it
// knows the environment's cluster types. Requests for one environment are at least minGap
// apart, so that reports cannot make the app render at their rate.
type renderOnDemand struct {
	render func(env envref.Env)
	minGap time.Duration
	now    func() time.Time

	mu   sync.Mutex
	last map[envref.Env]time.Time // environments come from the index, not from reports
}

// newRenderOnDemand calls render for an environment at most every minGap.
func newRenderOnDemand(render func(env envref.Env), minGap time.Duration, now func() time.Time) *renderOnDemand {
	return &renderOnDemand{render: render, minGap: minGap, now: now, last: map[envref.Env]time.Time{}}
}

// request asks for env to be rendered, unless it was asked for less than minGap ago.
func (r *renderOnDemand) request(env envref.Env) {
	r.mu.Lock()
	now := r.now()
	if at, ok := r.last[env]; ok && now.Sub(at) < r.minGap {
		r.mu.Unlock()
		return
	}
	r.last[env] = now
	r.mu.Unlock()
	r.render(env)
}

// renderIn renders an environment through core's work queue (a reconcile of its key).
func renderIn(ctx context.Context, core *handlers.Core, logger zerolog.Logger) func(env envref.Env) {
	return func(env envref.Env) {
		if core.Queue == nil { // not serving yet
			return
		}
		if err := core.Queue.Add(logger.WithContext(ctx), handlers.EnvironmentKey(env), nil); err != nil {
			logger.Warn().Err(err).Str("environment", env.Name).Msg("rendering an environment a report names")
		}
	}
}
