package reconcile

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/render"
)

// converge makes branch kalypso/<env> one commit on the GitOps branch with exactly the desired
// tree, and keeps one pull request for it; with nothing to change the pull request is closed.
func (r *Reconciler) converge(ctx context.Context, gitopsRepo gitcache.Remote, out *Outcome) error {
	branch := envref.AppBranch(out.Env.Name)
	return r.cache.Use(ctx, gitopsRepo, []string{out.Base, branch}, func(s *gitcache.Session) error {
		phasesOf(ctx).done("fetch_gitops")
		return r.convergeIn(ctx, s, out)
	})
}

// convergeIn is converge in the fetched GitOps repository.
func (r *Reconciler) convergeIn(ctx context.Context, s *gitcache.Session, out *Outcome) error {
	branch, repo, ph := envref.AppBranch(out.Env.Name), s.Repo, phasesOf(ctx)
	base := s.Head(out.Base)
	if base.IsZero() {
		return fmt.Errorf("GitOps repository %s has no branch %q", out.GitOps, out.Base)
	}
	appHead := s.Head(branch)
	// Only forward: every write below is leased on appHead, which must not come from newer sources.
	if err := checkForward(out.Sources, builtFrom(repo, appHead, base), r.ancestryIn(s, out.GitOps, out.Env.ControlPlane), out.firstRead); err != nil {
		return err
	}
	baseTree, err := gitops.TreeOf(repo, base)
	if err != nil {
		return err
	}
	index := r.results.index(out.Env, out.Result)
	proposal, err := gitops.Propose(repo.Storer, baseTree, out.Result, index)
	if err != nil {
		return err
	}
	out.Plan = proposal.Plan
	out.Promoted = promotes(out.Plan)
	ph.done("propose")
	if held, err := r.holds(ctx, out, proposal, index.Size(repo.Storer, baseTree, out.Result.Root)); err != nil || held {
		return err // the pull request stays as it is until the change is accepted
	}
	if proposal.Tree == baseTree {
		return r.retire(ctx, s, out, appHead)
	}
	commit := appHead
	if appHead.IsZero() || !gitops.Same(repo, appHead, proposal.Tree, base) {
		if commit, err = gitops.Commit(repo, proposal.Tree, base, commitMessage(out), r.now()); err != nil {
			return err
		}
		if err := s.Push(branch, commit, appHead); err != nil {
			return leased(err, branch, appHead, commit)
		}
	}
	ph.done("push")
	out.Commit = commit.String()
	err = r.ensurePR(ctx, out, branch)
	ph.done("pull_request")
	return err
}

// promotes reports whether a plan changes the promoted commit's file (a file outside the
// cluster types' folders).
func promotes(plan *render.Plan) bool {
	for _, c := range plan.Other {
		if c.Path == render.PromotedCommitPath {
			return true
		}
	}
	return false
}

// retire closes the app's pull request and deletes its branch when nothing is left to propose.
func (r *Reconciler) retire(ctx context.Context, s *gitcache.Session, out *Outcome, appHead plumbing.Hash) error {
	branch := envref.AppBranch(out.Env.Name)
	pr, err := r.findPR(ctx, out, branch)
	if err != nil {
		return err
	}
	if pr != nil {
		if err := r.closePR(ctx, out, pr); err != nil {
			return err
		}
	}
	if !appHead.IsZero() {
		if err := s.Delete(branch, appHead); err != nil {
			return leased(err, branch, appHead, plumbing.ZeroHash)
		}
	}
	return nil
}
