package handlers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-github/v62/github"
	"github.com/palantir/go-githubapp/githubapp"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
)

// CheckRun handles `check_run`: "Re-run" of an environment's check recomputes it, the
// Promote button of an approval check run promotes, and the Accept button of a check run
// held by the blast-radius guard accepts the change.
type CheckRun struct{ *Core }

// Handles implements githubapp.EventHandler.
func (h CheckRun) Handles() []string { return []string{"check_run"} }

// Handle implements githubapp.EventHandler.
func (h CheckRun) Handle(ctx context.Context, _, _ string, payload []byte) error {
	var ev github.CheckRunEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return fmt.Errorf("parse check_run event: %w", err)
	}
	if ev.GetAction() == "requested_action" && ev.GetRequestedAction().Identifier == promote.PromoteAction {
		inst := githubapp.GetInstallationIDFromEvent(&ev)
		ctx, _ = githubapp.PrepareRepoContext(ctx, inst, ev.GetRepo())
		return h.Promoter.Approve(ctx, inst, repoOf(ev.GetRepo()), ev.GetCheckRun(), ev.GetSender().GetLogin())
	}
	if ev.GetAction() == "requested_action" && ev.GetRequestedAction().Identifier == reconcile.AcceptAction {
		return h.accept(ctx, &ev)
	}
	if ev.GetAction() == "requested_action" && ev.GetRequestedAction().Identifier == reconcile.FullPreviewAction {
		return h.showFullPreview(ctx, &ev)
	}
	if ev.GetAction() != "rerequested" {
		return nil
	}
	if plane, env, ok := reconcile.ParsePreviewExternalID(ev.GetCheckRun().GetExternalID()); ok {
		return h.rerunPreview(ctx, &ev, plane, env)
	}
	plane, env, ok := reconcile.ParseExternalID(ev.GetCheckRun().GetExternalID())
	if !ok {
		return nil // not one of ours
	}
	inst := githubapp.GetInstallationIDFromEvent(&ev)
	ctx, _ = githubapp.PrepareRepoContext(ctx, inst, ev.GetRepo())
	repo := repoOf(ev.GetRepo())
	envs, err := h.Index.Matching(ctx, inst, func(e envref.EnvInfo) bool {
		return e.Env.ControlPlane == plane && e.Env.Name == env
	})
	if err != nil {
		return err
	}
	branch := ev.GetCheckRun().GetCheckSuite().GetHeadBranch()
	commit := reconcile.BranchCommit(inst, repo, branch, ev.GetCheckRun().GetHeadSHA())
	commit.Rerun = true
	if repo == plane && branch == gitsource.MainBranch {
		_, err := h.validateEnvs(ctx, envs, commit)
		return err
	}
	return h.reconcileAndReport(ctx, envs, &commit)
}

// accept records a click on Accept; an accepted environment check is reconciled again, so
// that the held change now reaches the GitOps pull request.
func (h CheckRun) accept(ctx context.Context, ev *github.CheckRunEvent) error {
	if h.Previews == nil {
		return nil
	}
	inst, repo, user := githubapp.GetInstallationIDFromEvent(ev), repoOf(ev.GetRepo()), ev.GetSender().GetLogin()
	ctx, logger := githubapp.PrepareRepoContext(ctx, inst, ev.GetRepo())
	a, err := h.Previews.AcceptBlastRadius(ctx, inst, repo, ev.GetCheckRun(), user)
	if err != nil || a == nil {
		return err
	}
	if a.Refusal != "" {
		logger.Warn().Str("environment", a.Env.Name).Str("user", user).Msg("blast radius acceptance refused: " + a.Refusal)
	}
	if !a.Accepted || a.Preview {
		return nil
	}
	envs, err := h.Index.Matching(ctx, inst, func(e envref.EnvInfo) bool { return e.Env == a.Env })
	if err != nil {
		return err
	}
	commit := reconcile.BranchCommit(inst, repo, ev.GetCheckRun().GetCheckSuite().GetHeadBranch(), ev.GetCheckRun().GetHeadSHA())
	return h.reconcileAndReport(ctx, envs, &commit)
}

// showFullPreview records a click on "Show full preview"; an approved one previews the pull
// request again, in full.
func (h CheckRun) showFullPreview(ctx context.Context, ev *github.CheckRunEvent) error {
	if h.Previews == nil {
		return nil
	}
	inst, repo, user := githubapp.GetInstallationIDFromEvent(ev), repoOf(ev.GetRepo()), ev.GetSender().GetLogin()
	ctx, logger := githubapp.PrepareRepoContext(ctx, inst, ev.GetRepo())
	a, err := h.Previews.ApproveFullPreview(ctx, inst, repo, ev.GetCheckRun(), user)
	if err != nil || a == nil {
		return err
	}
	if a.Refusal != "" {
		logger.Warn().Str("environment", a.Env.Name).Str("user", user).Msg("full preview refused: " + a.Refusal)
	}
	if !a.Approved || a.Number <= 0 {
		return nil
	}
	return h.previewAgain(ctx, ev, a.Env.ControlPlane, a.Env.Name, a.Number)
}
