package reconcile

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/procstat"
	"github.com/kalypso-gitops/kalypso/internal/remotewait"
)

// phases measures the steps of a reconcile and logs them at debug level, with the time the
// reconcile waited for GitHub (github_ms), the rest (app_ms: the app's own wall time) and the
// CPU time the process used meanwhile (cpu_ms).
type phases struct {
	start, last time.Time
	cpu         time.Duration
	clock       *remotewait.Clock
	event       *zerolog.Event
}

// startPhases starts measuring a reconcile; calls to GitHub made with the returned context
// count as waiting for GitHub.
func startPhases(ctx context.Context) (context.Context, *phases) {
	ctx, clock := remotewait.With(ctx)
	now := time.Now()
	p := &phases{start: now, last: now, cpu: procstat.CPU(), clock: clock, event: zerolog.Ctx(ctx).Debug()}
	return context.WithValue(ctx, phasesKey{}, p), p
}

// done records how long the step since the previous one took.
func (p *phases) done(step string) {
	now := time.Now()
	p.event = p.event.Float64(step+"_ms", ms(now.Sub(p.last)))
	p.last = now
}

// log writes the steps.
func (p *phases) log(env string) {
	total := time.Since(p.start)
	waited := p.clock.Waited()
	p.event.Str("environment", env).Float64("total_ms", ms(total)).Float64("github_ms", ms(waited)).
		Float64("app_ms", ms(total-waited)).Float64("cpu_ms", ms(procstat.CPU()-p.cpu)).Msg("reconcile phases")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type phasesKey struct{}

// phasesOf returns the phases of the reconcile in ctx, or a throw-away one.
func phasesOf(ctx context.Context) *phases {
	if p, ok := ctx.Value(phasesKey{}).(*phases); ok {
		return p
	}
	nop := zerolog.Nop()
	return &phases{last: time.Now(), clock: &remotewait.Clock{}, event: nop.Debug()}
}
