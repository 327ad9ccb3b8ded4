package handlers

import (
	"context"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// workBranch finds who reads or writes a branch that changed and makes their work due: the
// environments that read it (as their branch or a registered workload branch) reconcile and
// report on its head; those that write it (their GitOps branch) reconcile, and their
// promotion looks (a merged pull request starts the wait for the clusters); a declared control
// plane's main is validated and pinned. The index is read again first when the branch may
// change it (a control plane's branch, any main).
func (c *Core) workBranch(ctx context.Context, key workq.Key) error {
	inst, repo, branch := key.Inst, repoOfKey(key), key.Name
	isPlane, err := c.Index.IsControlPlane(ctx, inst, repo)
	if err != nil {
		return err
	}
	if isPlane || branch == gitsource.MainBranch {
		if err := c.Index.Refresh(ctx, inst, repo); err != nil {
			return err
		}
	}
	envs, err := c.Index.Environments(ctx, inst)
	if err != nil {
		return err
	}
	for _, e := range envs {
		if err := c.addForBranch(ctx, e, repo, branch); err != nil {
			return err
		}
	}
	if branch == gitsource.MainBranch && c.Index.Declared(repo) {
		return c.Queue.Add(ctx, MainKey(inst, repo), ReportOn(repo, branch, false))
	}
	return nil
}

// addForBranch makes e's work due when it reads or writes the branch.
func (c *Core) addForBranch(ctx context.Context, e envref.EnvInfo, repo envref.Repo, branch string) error {
	switch {
	case e.Env.ControlPlane == repo && e.Branch == branch, e.ReadsWorkload(repo, branch):
		return c.Queue.Add(ctx, EnvironmentKey(e.Env), ReportOn(repo, branch, false))
	case e.GitOps == repo && e.GitOpsBranch == branch:
		if err := c.Queue.Add(ctx, EnvironmentKey(e.Env), nil); err != nil {
			return err
		}
		return c.Queue.Add(ctx, PromotionKey(e.Env), nil)
	case e.GitOps == repo && branch == envref.AppBranch(e.Env.Name):
		return c.Queue.Add(ctx, PromotionKey(e.Env), nil) // its pull request's head gets kalypso/window
	}
	return nil
}
