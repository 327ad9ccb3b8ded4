package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
)

// Push handles `push`: to an environment branch, a workload branch, a GitOps branch or main.
type Push struct{ *Core }

// Handles implements githubapp.EventHandler.
func (h Push) Handles() []string { return []string{"push"} }

// Handle implements githubapp.EventHandler.
func (h Push) Handle(ctx context.Context, _, _ string, payload []byte) error {
	var ev github.PushEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return fmt.Errorf("parse push event: %w", err)
	}
	branch, ok := strings.CutPrefix(ev.GetRef(), "refs/heads/")
	if !ok || ev.GetDeleted() {
		return nil
	}
	inst := githubapp.GetInstallationIDFromEvent(&ev)
	repo := repoOf(&github.Repository{Owner: ev.GetRepo().GetOwner(), Name: ev.GetRepo().Name})
	ctx, _ = githubapp.PrepareRepoContext(ctx, inst, &github.Repository{Owner: &github.User{Login: &repo.Owner}, Name: &repo.Name})
	commit := reconcile.BranchCommit(inst, repo, branch, ev.GetAfter())
	isPlane, err := h.Index.IsControlPlane(ctx, inst, repo)
	if err != nil {
		return err
	}
	if branch == gitsource.MainBranch && !h.Index.Declared(repo) && declaresEnvironments(&ev) {
		zerolog.Ctx(ctx).Warn().Str("repository", repo.String()).
			Msg("repository changes .environments/ but is not a declared control plane (setting controlPlanes); ignored")
	}
	if isPlane || branch == gitsource.MainBranch {
		if err := h.Index.Refresh(ctx, inst, repo); err != nil {
			return err
		}
	}
	// Only a declared control plane's main is validated and promoted: an undeclared
	// repository is never fetched for it.
	if err := h.reconcileTouched(ctx, inst, repo, branch, commit); err != nil || branch != gitsource.MainBranch || !h.Index.Declared(repo) {
		return err
	}
	valid, err := h.validateMain(ctx, inst, repo, commit)
	if err != nil || !valid {
		return err
	}
	return h.Promoter.PromoteMain(ctx, promote.Locator{Installation: inst, ControlPlane: repo, Commit: commit.SHA})
}

// reconcileTouched reconciles every environment that reads or writes the pushed branch.
func (h Push) reconcileTouched(ctx context.Context, inst int64, repo envref.Repo, branch string, commit reconcile.Commit) error {
	envs, err := h.Index.Environments(ctx, inst)
	if err != nil {
		return err
	}
	var mine, others []envref.EnvInfo
	for _, e := range envs {
		switch {
		case e.Env.ControlPlane == repo && e.Branch == branch:
			mine = append(mine, e)
		case e.ReadsWorkload(repo, branch):
			mine = append(mine, e)
		case e.GitOps == repo && e.GitOpsBranch == branch:
			others = append(others, e)
		}
	}
	if err := h.reconcileAndReport(ctx, mine, &commit); err != nil {
		return err
	}
	return h.reconcileAndReport(ctx, others, nil)
}

// declaresEnvironments reports whether a push adds, changes or removes a file in .environments/.
func declaresEnvironments(ev *github.PushEvent) bool {
	for _, c := range ev.Commits {
		for _, files := range [][]string{c.Added, c.Modified, c.Removed} {
			for _, f := range files {
				if strings.HasPrefix(f, ".environments/") {
					return true
				}
			}
		}
	}
	return false
}

// validateMain checks a main commit against every environment of the control plane, reports a
// check run per environment on it, and tells whether it is valid everywhere.
func (h Push) validateMain(ctx context.Context, inst int64, repo envref.Repo, commit reconcile.Commit) (bool, error) {
	envs, err := h.Index.Matching(ctx, inst, func(e envref.EnvInfo) bool { return e.Env.ControlPlane == repo })
	if err != nil {
		return false, err
	}
	return h.validateEnvs(ctx, envs, commit)
}
