package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// Events lists the webhook events Route handles; the others are answered without work.
func (c *Core) Events() []string {
	return []string{"push", "pull_request", "check_run", "status", "installation", "installation_repositories"}
}

// Route adds the work a verified delivery names to the queue, with ctx (which carries the
// delivery's round), and does nothing else: no I/O, so a delivery is answered at once. It
// reports whether the event is an echo of the app's own write (its check runs, pushes,
// pull requests and statuses), which names no work. A key already waiting absorbs the add,
// so a burst of deliveries costs one run per key.
func (c *Core) Route(ctx context.Context, event string, payload []byte) (echo bool, err error) {
	switch event {
	case "push":
		return c.routePush(ctx, payload)
	case "pull_request":
		return c.routePullRequest(ctx, payload)
	case "check_run":
		return c.routeCheckRun(ctx, payload)
	case "status":
		return c.routeStatus(ctx, payload)
	case "installation", "installation_repositories":
		return false, c.routeInstallation(ctx, payload)
	}
	return false, nil
}

// fromSelf reports whether a sender is the App's bot user.
func (c *Core) fromSelf(sender *github.User) bool {
	if c.Self.Bot == nil {
		return false
	}
	bot := c.Self.Bot()
	return bot != "" && strings.EqualFold(sender.GetLogin(), bot)
}

// checkRunEcho reports whether a check_run event only tells of a check run the app created or
// completed itself: GitHub sends those for every check run an App writes.
func (c *Core) checkRunEcho(ev *github.CheckRunEvent) bool {
	switch ev.GetAction() {
	case "created", "completed":
		return c.Self.AppID != 0 && ev.GetCheckRun().GetApp().GetID() == c.Self.AppID || c.fromSelf(ev.GetSender())
	}
	return false
}

// decode parses a payload.
func decode[T any](event string, payload []byte) (*T, error) {
	var ev T
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("parse %s event: %w", event, err)
	}
	return &ev, nil
}

// repoOf names the repository of an event.
func repoOf(r *github.Repository) envref.Repo {
	repo := envref.Repo{Owner: r.GetOwner().GetLogin(), Name: r.GetName()}
	if repo.Owner == "" { // push events name the owner, not its login
		repo.Owner = r.GetOwner().GetName()
	}
	return repo
}
