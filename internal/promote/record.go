package promote

import (
	"context"

	"github.com/kalypso-gitops/kalypso/internal/audit"
)

// WithAudit records every decision of promotions in the audit trail (default: none).
func WithAudit(a audit.Appender) Option { return func(p *Promoter) { p.trail = a } }

type actorKey struct{}

// withActor marks ctx as the work of a user's decision (a click, a request).
func withActor(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, actorKey{}, user)
}

// actorOf returns the user withActor marked ctx with, or audit.App.
func actorOf(ctx context.Context) string {
	if u, ok := ctx.Value(actorKey{}).(string); ok && u != "" {
		return u
	}
	return audit.App
}

// record appends a decision about l to the audit trail: who (the actor of ctx), which commits
// (l's, and the previous one), why. A failure to record is logged as an error; the decision,
// already made on GitHub, stands.
func (p *Promoter) record(ctx context.Context, kind string, l Locator, previous, reason string) {
	if p.trail == nil {
		return
	}
	r := audit.Record{Actor: actorOf(ctx), ControlPlane: l.ControlPlane.String(), Environment: l.Env, Commit: l.Commit,
		Previous: previous, Reason: reason}
	if err := audit.Append(ctx, p.trail, kind, r); err != nil {
		logger(ctx).Error().Err(err).Str("kind", kind).Str("environment", l.Env).Msg("recording a decision in the audit trail")
	}
}
