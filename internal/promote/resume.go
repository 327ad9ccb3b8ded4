package promote

import (
	"context"
	"encoding/json"
	"errors"
	"path"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Merged starts the compliance wait of an environment whose GitOps pull request was merged.
func (p *Promoter) Merged(ctx context.Context, inst int64, gitopsRepo reconcile.Repo, pr *github.PullRequest) error {
	env, ok := strings.CutPrefix(pr.GetHead().GetRef(), reconcile.BranchPrefix)
	if !ok || !pr.GetMerged() {
		return nil
	}
	infos, err := p.index.Matching(ctx, inst, func(e reconcile.EnvInfo) bool {
		return e.Env.Name == env && e.GitOps == gitopsRepo && e.GitOpsBranch == pr.GetBase().GetRef()
	})
	if err != nil {
		return err
	}
	for _, info := range infos {
		if err := p.mergedInto(ctx, info, pr.GetMergeCommitSHA()); err != nil {
			return err
		}
	}
	return nil
}

// mergedInto starts waiting for the commit promoted by a merge of the environment's pull
// request. merge is the GitOps commit of the merge; "" (the merge was not heard of) finds it
// on the GitOps branch.
func (p *Promoter) mergedInto(ctx context.Context, info reconcile.EnvInfo, merge string) error {
	chain, _, err := p.chain(ctx, info.Env.Installation, info.Env.ControlPlane)
	if err != nil {
		return err
	}
	s := chain.Stages[info.Env.Name]
	if s == nil {
		return nil // no spec.promotion: the pin is edited by hand, as in the reference
	}
	main, at, err := p.promotedIn(ctx, info, merge)
	if err != nil || main == "" || at == "" {
		return err
	}
	p.startWait(&deployment{Inst: info.Env.Installation, CP: info.Env.ControlPlane, Stage: s, Main: main,
		GitOps: info.GitOps, Branch: info.GitOpsBranch, Merge: at, Started: p.now()})
	return nil
}

// promotedIn reads the main commit a GitOps commit records as promoted, and returns it with
// that GitOps commit. With commit "", it reads the head of the GitOps branch and returns the
// oldest commit of the branch that records the same promoted commit: where it was merged.
func (p *Promoter) promotedIn(ctx context.Context, info reconcile.EnvInfo, commit string) (main, at string, err error) {
	token, err := p.clients.Token(ctx, info.Env.Installation)
	if err != nil {
		return "", "", err
	}
	unlock := p.cache.Lock(info.GitOps.Owner, info.GitOps.Name)
	defer unlock()
	repo, err := p.cache.Fetch(ctx, info.GitOps.Owner, info.GitOps.Name, token, info.GitOpsBranch)
	if err != nil {
		return "", "", err
	}
	file := path.Join(info.GitOpsPath, render.PromotedCommitPath)
	promoted := func(h plumbing.Hash) string { return strings.TrimSpace(string(gitops.ReadFile(repo, h, file))) }
	if commit != "" {
		return promoted(plumbing.NewHash(commit)), commit, nil
	}
	head := gitcache.Head(repo, info.GitOpsBranch)
	if head.IsZero() {
		return "", "", nil
	}
	main = promoted(head)
	return main, mergeOf(repo, head, main, promoted).String(), nil
}

// mergeOf walks back the first parents of head, at most maxDescendants commits, while they
// record main as promoted, and returns the oldest that does (head when main is "").
func mergeOf(repo *git.Repository, head plumbing.Hash, main string, promoted func(plumbing.Hash) string) plumbing.Hash {
	at := head
	if main == "" {
		return at
	}
	for range maxDescendants {
		c, err := repo.CommitObject(at)
		if err != nil || len(c.ParentHashes) == 0 || promoted(c.ParentHashes[0]) != main {
			break
		}
		at = c.ParentHashes[0]
	}
	return at
}

// Resume finds the promotions under way in an installation from their pending statuses and
// continues them, so that a restart loses nothing.
func (p *Promoter) Resume(ctx context.Context, inst int64) error {
	infos, err := p.index.Environments(ctx, inst)
	if err != nil {
		return err
	}
	var errs []error
	for _, info := range infos {
		if err := p.resumeEnv(ctx, info); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (p *Promoter) resumeEnv(ctx context.Context, info reconcile.EnvInfo) error {
	inst, cp, env := info.Env.Installation, info.Env.ControlPlane, info.Env.Name
	chain, repo, err := p.chain(ctx, inst, cp)
	if err != nil || chain.Stages[env] == nil {
		return err
	}
	s := chain.Stages[env]
	fsys, err := gitsource.TreeFS(repo, gitcache.Head(repo, s.Env.Spec.ControlPlane.Branch))
	if err != nil {
		return nil // the environment branch does not exist yet
	}
	pin := scheduling.PinnedCommit(scheduling.Source{FS: fsys})
	if pin == "" {
		return nil
	}
	st, err := p.currentStatus(ctx, inst, cp, pin, env)
	if err != nil || st == nil {
		return err
	}
	switch {
	case st.GetState() == "pending" && st.GetDescription() == descAwaitMerge:
		deployed, merge, err := p.promotedIn(ctx, info, "")
		if err != nil || deployed != pin {
			return err // the pull request is not merged yet; its merge will start the wait
		}
		return p.mergedInto(ctx, info, merge) // merged while the app was down or its webhook lost
	case st.GetState() == "pending" && strings.Contains(st.GetDescription(), descDeploying):
		return p.resumeWait(ctx, info, s, pin)
	case st.GetState() == "success":
		return p.resumeNext(ctx, info, chain, pin, st)
	}
	return nil
}

// resumeWait continues a wait whose Deployment says where the pull request was merged.
func (p *Promoter) resumeWait(ctx context.Context, info reconcile.EnvInfo, s *scheduling.Stage, pin string) error {
	gh, err := p.clients.Client(ctx, info.Env.Installation)
	if err != nil {
		return err
	}
	cp := info.Env.ControlPlane
	list, _, err := gh.Repositories.ListDeployments(ctx, cp.Owner, cp.Name, &github.DeploymentsListOptions{SHA: pin, Environment: info.Env.Name})
	if err != nil || len(list) == 0 {
		return err
	}
	var pl payload
	if err := json.Unmarshal(list[0].Payload, &pl); err != nil {
		return nil
	}
	if pl.GitOpsCommit == "" { // written by a version that did not know where the merge was
		deployed, merge, err := p.promotedIn(ctx, info, "")
		if err != nil || deployed != pin {
			return err
		}
		pl.GitOpsCommit = merge
	}
	p.startWait(&deployment{Inst: info.Env.Installation, CP: cp, Stage: s, Main: pin, GitOps: info.GitOps,
		Branch: info.GitOpsBranch, Merge: pl.GitOpsCommit, Started: list[0].GetCreatedAt().Time, ID: list[0].GetID()})
	return nil
}

// resumeNext promotes a deployed commit into the automatic next environments it has not reached.
func (p *Promoter) resumeNext(ctx context.Context, info reconcile.EnvInfo, chain *scheduling.Chain, pin string, st *github.RepoStatus) error {
	inst, cp := info.Env.Installation, info.Env.ControlPlane
	for _, next := range chain.Next(info.Env.Name) {
		if next.Manual {
			continue
		}
		if got, err := p.currentStatus(ctx, inst, cp, pin, next.Env.Name); err != nil || got != nil {
			continue // already on its way there (or unreadable now)
		}
		soaked := p.now().Sub(st.GetUpdatedAt().Time)
		p.wg.Add(1)
		go func(env string) {
			defer p.wg.Done()
			if err := p.next(p.base, inst, cp, info.Env.Name, pin, soaked); err != nil && p.base.Err() == nil {
				logger(p.base).Error().Err(err).Str("environment", env).Msg("promotion after restart failed")
			}
		}(next.Env.Name)
		break // next() promotes every automatic successor at once
	}
	return nil
}
