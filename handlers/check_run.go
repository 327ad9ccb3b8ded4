package handlers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-github/v62/github"
	"github.com/palantir/go-githubapp/githubapp"

	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
)

// CheckRun handles `check_run`: "Re-run" of an environment's check recomputes it, and the
// Promote button of an approval check run promotes.
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
		repo := reconcile.Repo{Owner: ev.GetRepo().GetOwner().GetLogin(), Name: ev.GetRepo().GetName()}
		return h.Promoter.Approve(ctx, inst, repo, ev.GetCheckRun(), ev.GetSender().GetLogin())
	}
	if ev.GetAction() != "rerequested" {
		return nil
	}
	plane, env, ok := reconcile.ParseExternalID(ev.GetCheckRun().GetExternalID())
	if !ok {
		return nil // not one of ours
	}
	inst := githubapp.GetInstallationIDFromEvent(&ev)
	ctx, _ = githubapp.PrepareRepoContext(ctx, inst, ev.GetRepo())
	repo := reconcile.Repo{Owner: ev.GetRepo().GetOwner().GetLogin(), Name: ev.GetRepo().GetName()}
	envs, err := h.Index.Matching(ctx, inst, func(e reconcile.EnvInfo) bool {
		return e.Env.ControlPlane == plane && e.Env.Name == env
	})
	if err != nil {
		return err
	}
	branch := ev.GetCheckRun().GetCheckSuite().GetHeadBranch()
	commit := reconcile.Commit{Installation: inst, Repo: repo, Branch: branch, SHA: ev.GetCheckRun().GetHeadSHA(),
		Prefixes: []string{branch + ":", reconcile.WorkloadPrefix(repo, branch)}, Rerun: true}
	if repo == plane && branch == gitsource.MainBranch {
		_, err := Push{Core: h.Core}.validateEnvs(ctx, envs, commit)
		return err
	}
	return h.reconcileAndReport(ctx, envs, &commit)
}
