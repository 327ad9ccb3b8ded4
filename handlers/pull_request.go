package handlers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-github/v62/github"
	"github.com/palantir/go-githubapp/githubapp"
)

// PullRequest handles `pull_request`: a merged GitOps pull request of the app starts the wait
// for cluster compliance of the commit it promotes; an open pull request into a control plane
// is previewed (see preview.go).
type PullRequest struct{ *Core }

// Handles implements githubapp.EventHandler.
func (h PullRequest) Handles() []string { return []string{"pull_request"} }

// Handle implements githubapp.EventHandler.
func (h PullRequest) Handle(ctx context.Context, _, _ string, payload []byte) error {
	var ev github.PullRequestEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return fmt.Errorf("parse pull_request event: %w", err)
	}
	if wantsPreview(&ev) {
		return h.preview(ctx, &ev)
	}
	if ev.GetAction() != "closed" || !ev.GetPullRequest().GetMerged() {
		return nil
	}
	inst := githubapp.GetInstallationIDFromEvent(&ev)
	ctx, _ = githubapp.PrepareRepoContext(ctx, inst, ev.GetRepo())
	return h.Promoter.Merged(ctx, inst, repoOf(ev.GetRepo()), ev.GetPullRequest())
}
