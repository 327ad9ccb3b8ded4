package reconcile

import (
	"context"
	"time"

	"github.com/rs/zerolog"
)

// phases measures the steps of a reconcile and logs them at debug level.
type phases struct {
	last  time.Time
	event *zerolog.Event
}

func startPhases(ctx context.Context) *phases {
	return &phases{last: time.Now(), event: zerolog.Ctx(ctx).Debug()}
}

// done records how long the step since the previous one took.
func (p *phases) done(step string) {
	now := time.Now()
	p.event = p.event.Float64(step+"_ms", float64(now.Sub(p.last).Microseconds())/1000)
	p.last = now
}

// log writes the steps.
func (p *phases) log(env string) { p.event.Str("environment", env).Msg("reconcile phases") }

type phasesKey struct{}

func withPhases(ctx context.Context, p *phases) context.Context {
	return context.WithValue(ctx, phasesKey{}, p)
}

// phasesOf returns the phases of the reconcile in ctx, or a throw-away one.
func phasesOf(ctx context.Context) *phases {
	if p, ok := ctx.Value(phasesKey{}).(*phases); ok {
		return p
	}
	nop := zerolog.Nop()
	return &phases{last: time.Now(), event: nop.Debug()}
}
