package gitcache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/internal/remotewait"
)

// ErrNoPull says that a repository has no refs for a pull request.
var ErrNoPull = errors.New("no such pull request refs")

// fetchPull fetches refs/pull/N/merge (or /head when there is no test merge) into
// refs/kalypso/pull/N/<which> (apart from the branches, which a branch name cannot reach) and
// returns its commit.
func (c *Cache) fetchPull(ctx context.Context, repo *git.Repository, token string, number int) (plumbing.Hash, string, error) {
	defer remotewait.Since(ctx, time.Now())
	remote, err := repo.Remote("origin")
	if err != nil {
		return plumbing.ZeroHash, "", fmt.Errorf("remote origin: %w", err)
	}
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth(token)})
	if err != nil {
		return plumbing.ZeroHash, "", fmt.Errorf("list %s: %w", remote.Config().URLs[0], err)
	}
	have := map[plumbing.ReferenceName]bool{}
	for _, r := range refs {
		have[r.Name()] = true
	}
	for _, which := range []string{"merge", "head"} {
		src := plumbing.ReferenceName(fmt.Sprintf("refs/pull/%d/%s", number, which))
		if !have[src] {
			continue
		}
		dst := plumbing.ReferenceName(fmt.Sprintf("refs/kalypso/pull/%d/%s", number, which))
		spec := gitconfig.RefSpec("+" + src.String() + ":" + dst.String())
		err := repo.FetchContext(ctx, &git.FetchOptions{RemoteName: "origin", RefSpecs: []gitconfig.RefSpec{spec}, Auth: auth(token), Force: true})
		if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
			return plumbing.ZeroHash, "", fmt.Errorf("fetch %s: %w", src, err)
		}
		ref, err := repo.Reference(dst, true)
		if err != nil {
			return plumbing.ZeroHash, "", fmt.Errorf("read %s: %w", dst, err)
		}
		return ref.Hash(), which, nil
	}
	return plumbing.ZeroHash, "", fmt.Errorf("pull request %d: %w", number, ErrNoPull)
}
