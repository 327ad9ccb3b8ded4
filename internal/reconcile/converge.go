package reconcile

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5"
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
	changes, basePaths, baseTree, err := desiredChanges(repo, base, out)
	if err != nil {
		return err
	}
	ph.done("diff")
	if held, err := r.holds(ctx, out, basePaths, changes); err != nil || held {
		return err // the pull request stays as it is until the change is accepted
	}
	if len(changes) == 0 {
		return r.retire(ctx, s, out, appHead)
	}
	tree, err := buildTree(repo, base, baseTree, basePaths, appHead, changes)
	if err != nil {
		return err
	}
	ph.done("tree")
	commit := appHead
	if appHead.IsZero() || !gitops.Same(repo, appHead, tree, base) {
		if commit, err = gitops.Commit(repo, tree, base, commitMessage(out), r.now()); err != nil {
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

// desiredChanges compares the desired tree with the GitOps branch by blob hash, reading no blob;
// each changed path maps to its new content and hash, or to nil when it is removed.
func desiredChanges(repo *git.Repository, base plumbing.Hash, out *Outcome) (map[string]*gitops.Entry, map[string]plumbing.Hash, plumbing.Hash, error) {
	paths, baseTree, err := gitops.Paths(repo, base)
	if err != nil {
		return nil, nil, plumbing.ZeroHash, err
	}
	prev := make(render.Tree, len(paths))
	for p := range paths {
		prev[p] = nil // kept files come back as nil: unchanged
	}
	next := out.Result.Apply(prev)
	changes := map[string]*gitops.Entry{}
	var list []render.Change
	for p, content := range next {
		if content == nil {
			continue
		}
		h := gitops.BlobHash(content)
		old, existed := paths[p]
		switch {
		case existed && old == h:
			continue
		case existed:
			list = append(list, render.Change{Path: p, Kind: render.Changed})
		default:
			list = append(list, render.Change{Path: p, Kind: render.Added})
		}
		changes[p] = &gitops.Entry{Data: content, Hash: h}
	}
	for p := range paths {
		if _, ok := next[p]; !ok {
			changes[p] = nil
			list = append(list, render.Change{Path: p, Kind: render.Removed})
		}
	}
	out.Plan = render.GroupChanges(list, out.Result.Root)
	_, out.Promoted = changes[promotedPath(out.Result.Root)]
	return changes, paths, baseTree, nil
}

// buildTree writes the tree of base with changes applied. When the app's branch already is one
// commit on base, it starts from that commit's tree and writes only what differs from it, so an
// unchanged proposal of thousands of files costs nothing.
func buildTree(repo *git.Repository, base, baseTree plumbing.Hash, basePaths map[string]plumbing.Hash, appHead plumbing.Hash, changes map[string]*gitops.Entry) (plumbing.Hash, error) {
	head, err := repo.CommitObject(appHead)
	if appHead.IsZero() || err != nil || len(head.ParentHashes) != 1 || head.ParentHashes[0] != base {
		return gitops.EditEntries(repo, baseTree, changes)
	}
	headPaths, headTree, err := gitops.Paths(repo, appHead)
	if err != nil {
		return gitops.EditEntries(repo, baseTree, changes)
	}
	// want is the desired entry of a path: its change, else the base's file, else nothing.
	want := func(p string) *gitops.Entry {
		if e, ok := changes[p]; ok {
			return e
		}
		if h, ok := basePaths[p]; ok {
			return &gitops.Entry{Hash: h}
		}
		return nil
	}
	delta := map[string]*gitops.Entry{}
	seen := make(map[string]bool, len(headPaths))
	visit := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		e, h := want(p), plumbing.ZeroHash
		if e != nil {
			h = e.Hash
		}
		if headPaths[p] != h {
			delta[p] = e // nil deletes
		}
	}
	for p := range changes {
		visit(p)
	}
	for p := range headPaths {
		visit(p)
	}
	for p := range basePaths {
		visit(p)
	}
	return gitops.EditEntries(repo, headTree, delta)
}

func promotedPath(root string) string {
	if root == "" {
		return render.PromotedCommitPath
	}
	return root + "/" + render.PromotedCommitPath
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
