package handlers

import (
	"context"

	"github.com/google/go-github/v62/github"
	"github.com/palantir/go-githubapp/githubapp"
)

// routePullRequest names the preview of an open pull request that changed, and the base
// branch of a merged one (its merge moved that branch: a GitOps pull request merged starts the
// wait for the clusters). The app's own pull requests are echoes.
func (c *Core) routePullRequest(ctx context.Context, payload []byte) (bool, error) {
	ev, err := decode[github.PullRequestEvent]("pull_request", payload)
	if err != nil {
		return false, err
	}
	if c.fromSelf(ev.GetSender()) {
		return true, nil
	}
	inst, repo, pr := githubapp.GetInstallationIDFromEvent(ev), repoOf(ev.GetRepo()), ev.GetPullRequest()
	switch {
	case wantsPreview(ev) && c.Previews != nil && pr.GetNumber() > 0:
		return false, c.Queue.Add(ctx, PreviewKey(inst, repo, pr.GetNumber()), nil)
	case ev.GetAction() == "closed" && pr.GetMerged() && pr.GetBase().GetRef() != "":
		return false, c.Queue.Add(ctx, BranchKey(inst, repo, pr.GetBase().GetRef()), nil)
	}
	return false, nil
}

// wantsPreview reports whether an event asks for a new preview: an open pull request opened,
// reopened, pushed to, or moved to another base. Closed ones get nothing more.
func wantsPreview(ev *github.PullRequestEvent) bool {
	if ev.GetPullRequest().GetState() != "open" {
		return false
	}
	switch ev.GetAction() {
	case "opened", "synchronize", "reopened":
		return true
	case "edited":
		return ev.GetChanges().GetBase() != nil
	}
	return false
}
