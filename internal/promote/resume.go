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

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Merged starts the compliance wait of an environment whose GitOps pull request was merged.
func (p *Promoter) Merged(ctx context.Context, inst int64, gitopsRepo envref.Repo, pr *github.PullRequest) error {
	env, ok := strings.CutPrefix(pr.GetHead().GetRef(), envref.BranchPrefix)
	if !ok || !pr.GetMerged() {
		return nil
	}
	infos, err := p.index.Matching(ctx, inst, func(e envref.EnvInfo) bool {
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
func (p *Promoter) mergedInto(ctx context.Context, info envref.EnvInfo, merge string) error {
	chain, err := p.chain(ctx, locate(info.Env, ""))
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
	p.startWait(&deployment{Locator: locate(info.Env, main), Stage: s,
		GitOps: info.GitOps, Branch: info.GitOpsBranch, Merge: at, Started: p.now()})
	return nil
}

// promotedIn reads the main commit a GitOps commit records as promoted, and returns it with
// that GitOps commit. With commit "", it reads the head of the GitOps branch and returns the
// oldest commit of the branch that records the same promoted commit: where it was merged.
func (p *Promoter) promotedIn(ctx context.Context, info envref.EnvInfo, commit string) (main, at string, err error) {
	remote, err := p.remote(ctx, info.Env.Installation, info.GitOps)
	if err != nil {
		return "", "", err
	}
	err = p.cache.Use(ctx, remote, []string{info.GitOpsBranch}, func(s *gitcache.Session) error {
		file := path.Join(info.GitOpsPath, render.PromotedCommitPath)
		promoted := func(h plumbing.Hash) string { return strings.TrimSpace(string(gitops.ReadFile(s.Repo, h, file))) }
		if commit != "" {
			main, at = promoted(plumbing.NewHash(commit)), commit
			return nil
		}
		if head := s.Head(info.GitOpsBranch); !head.IsZero() {
			main = promoted(head)
			at = mergeOf(s.Repo, head, main, promoted).String()
		}
		return nil
	})
	return main, at, err
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

// pinned reads the promotion chain and the commit the environment of info pins ("" when its
// branch or its pin cannot be read).
func (p *Promoter) pinned(ctx context.Context, info envref.EnvInfo) (*scheduling.Chain, string, error) {
	var chain *scheduling.Chain
	var pin string
	err := p.onMain(ctx, locate(info.Env, ""), func(c *scheduling.Chain, s *gitcache.Session) error {
		chain = c
		if st := c.Stages[info.Env.Name]; st != nil {
			pin = pinOf(s.Repo, st)
		}
		return nil
	})
	return chain, pin, err
}

func (p *Promoter) resumeEnv(ctx context.Context, info envref.EnvInfo) error {
	chain, pin, err := p.pinned(ctx, info)
	if err != nil || chain.Stages[info.Env.Name] == nil || pin == "" {
		return err
	}
	l := locate(info.Env, pin)
	st, err := p.currentStatus(ctx, l)
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
	case st.GetState() == "pending" && IsWaiting(st.GetDescription()):
		return p.resumeWait(ctx, info, chain.Stages[info.Env.Name], pin)
	case st.GetState() == "success":
		return p.resumeNext(ctx, l, chain, st)
	}
	return nil
}

// resumeWait continues a wait whose Deployment says where the pull request was merged.
func (p *Promoter) resumeWait(ctx context.Context, info envref.EnvInfo, s *scheduling.Stage, pin string) error {
	gh, err := p.clients.Client(ctx, info.Env.Installation)
	if err != nil {
		return err
	}
	list, err := gh.Deployments(ctx, info.Env.ControlPlane, &github.DeploymentsListOptions{SHA: pin, Environment: info.Env.Name})
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
	p.startWait(&deployment{Locator: locate(info.Env, pin), Stage: s, GitOps: info.GitOps,
		Branch: info.GitOpsBranch, Merge: pl.GitOpsCommit, Started: list[0].GetCreatedAt().Time, ID: list[0].GetID()})
	return nil
}

// resumeNext promotes a deployed commit into the automatic next environments it has not reached.
func (p *Promoter) resumeNext(ctx context.Context, l Locator, chain *scheduling.Chain, st *github.RepoStatus) error {
	for _, next := range chain.Next(l.Env) {
		if next.Manual {
			continue
		}
		if got, err := p.currentStatus(ctx, l.In(next.Env.Name)); err != nil || got != nil {
			continue // already on its way there (or unreadable now)
		}
		soaked := p.now().Sub(st.GetUpdatedAt().Time)
		p.wg.Add(1)
		go func(env string) {
			defer p.wg.Done()
			if err := p.next(p.base, l, soaked); err != nil && p.base.Err() == nil {
				logger(p.base).Error().Err(err).Str("environment", env).Msg("promotion after restart failed")
			}
		}(next.Env.Name)
		break // next() promotes every automatic successor at once
	}
	return nil
}
