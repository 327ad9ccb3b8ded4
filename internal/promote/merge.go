package promote

import (
	"context"
	"path"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/render"
)

// promotedIn reads the main commit the head of the environment's GitOps branch records as
// promoted, and the oldest commit of the branch that records the same: where the pull request
// that promoted it was merged.
func (p *Promoter) promotedIn(ctx context.Context, info envref.EnvInfo) (main, at string, err error) {
	remote, err := p.remote(ctx, info.Env.Installation, info.GitOps)
	if err != nil {
		return "", "", err
	}
	err = p.cache.Use(ctx, remote, []string{info.GitOpsBranch}, func(s *gitcache.Session) error {
		file := path.Join(info.GitOpsPath, render.PromotedCommitPath)
		promoted := func(h plumbing.Hash) string { return strings.TrimSpace(string(gitops.ReadFile(s.Repo, h, file))) }
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
