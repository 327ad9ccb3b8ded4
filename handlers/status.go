package handlers

import (
	"context"

	"github.com/google/go-github/v62/github"
	"github.com/palantir/go-githubapp/githubapp"
)

// routeStatus names the promotions of the installation that wait for clusters here: a cluster
// reported, so they look now instead of at their next poll. Polling alone is enough; this only
// makes it faster. Statuses the app posts itself are echoes.
func (c *Core) routeStatus(ctx context.Context, payload []byte) (bool, error) {
	ev, err := decode[github.StatusEvent]("status", payload)
	if err != nil {
		return false, err
	}
	if c.fromSelf(ev.GetSender()) {
		return true, nil
	}
	for _, env := range c.Promoter.Waiting(githubapp.GetInstallationIDFromEvent(ev)) {
		if err := c.Queue.Add(ctx, PromotionKey(env), nil); err != nil {
			return false, err
		}
	}
	return false, nil
}
