package workq

import "context"

// Origins of runs that no delivery made due.
const (
	// OriginPoll: the key's own timer (AddAfter, RequeueAfter) made the run due.
	OriginPoll = "poll"
	// OriginResync names the work the periodic resync makes due (set by its caller).
	OriginResync = "resync"
)

type originKey struct{}

// WithOrigin marks the keys added with the returned context as made due by origin: a webhook
// delivery's ID, or OriginResync. A run's context carries the origin of the newest add
// coalesced into it, so the keys it adds in turn inherit it.
func WithOrigin(ctx context.Context, origin string) context.Context {
	return context.WithValue(ctx, originKey{}, origin)
}

// OriginOf returns what made the run of ctx due (see WithOrigin), "" when unknown.
func OriginOf(ctx context.Context) string {
	o, _ := ctx.Value(originKey{}).(string)
	return o
}
