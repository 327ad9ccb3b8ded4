// Package gitcache keeps local bare clones of the repositories the app reads and writes, and
// moves bulk content over git (fetch and push) rather than the REST API. Cache.Use is the one
// way in: it locks a repository, fetches it and hands a Session (its heads, its objects, a
// leased push) to a function, releasing the lock when the function returns.
package gitcache

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/kalypso-gitops/kalypso/internal/remotewait"
)

// ErrEmpty is returned when a remote repository has no commits yet.
var ErrEmpty = errors.New("repository is empty")

// ErrStale is returned when a push lost a race: the remote branch moved since it was read.
var ErrStale = errors.New("remote branch moved")

// Cache holds one bare repository per remote repository below a folder.
type Cache struct {
	dir    string
	webURL string
	locks  sync.Map // owner/name → *sync.Mutex
	repos  sync.Map // owner/name → *git.Repository, opened
	budget budget   // size and use of each repository, to stay within a bound
}

// New returns a cache in dir for repositories served below webURL (e.g. https://github.com);
// with dir "" the repositories are kept in memory. A repository is opened once and kept open.
func New(dir, webURL string, opts ...Option) *Cache {
	c := &Cache{dir: dir, webURL: strings.TrimSuffix(webURL, "/"),
		budget: budget{size: map[string]int64{}, used: map[string]time.Time{}, clock: time.Now}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// URL is the clone URL of a repository.
func (c *Cache) URL(owner, name string) string {
	return fmt.Sprintf("%s/%s/%s.git", c.webURL, owner, name)
}

// lock serialises work on one repository; call the returned function to release it.
func (c *Cache) lock(owner, name string) func() {
	m, _ := c.locks.LoadOrStore(owner+"/"+name, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

func auth(token string) transport.AuthMethod {
	if token == "" {
		return nil
	}
	return &githttp.BasicAuth{Username: "x-access-token", Password: token}
}

// open returns the cached repository, opening or creating it (bare, with remote origin) if
// needed. The caller holds its lock.
func (c *Cache) open(owner, name string) (*git.Repository, error) {
	key := owner + "/" + name
	if repo, ok := c.repos.Load(key); ok {
		return repo.(*git.Repository), nil
	}
	var repo *git.Repository
	var err error
	if c.dir == "" {
		repo, err = newMemoryRepository(c.URL(owner, name))
	} else {
		repo, err = openDiskRepository(filepath.Join(c.dir, owner, name+".git"), c.URL(owner, name))
	}
	if err != nil {
		return nil, fmt.Errorf("open cache of %s/%s: %w", owner, name, err)
	}
	actual, _ := c.repos.LoadOrStore(key, repo)
	return actual.(*git.Repository), nil
}

// fetch brings the given branches (all when none) into refs/remotes/origin/* and returns the
// repository; branches that do not exist remotely are skipped.
func (c *Cache) fetch(ctx context.Context, owner, name, token string, branches ...string) (*git.Repository, error) {
	defer remotewait.Since(ctx, time.Now())
	repo, err := c.open(owner, name)
	if err != nil {
		return nil, err
	}
	specs := []gitconfig.RefSpec{"+refs/heads/*:refs/remotes/origin/*"}
	if len(branches) > 0 {
		specs, err = c.existing(ctx, repo, token, branches)
		if err != nil || len(specs) == 0 {
			return repo, err
		}
	}
	err = repo.FetchContext(ctx, &git.FetchOptions{RemoteName: "origin", RefSpecs: specs, Auth: auth(token), Force: true, Prune: len(branches) == 0})
	switch {
	case err == nil:
		c.account(owner+"/"+name, repo)
		return repo, nil
	case errors.Is(err, git.NoErrAlreadyUpToDate):
		c.touch(owner + "/" + name)
		return repo, nil
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return repo, fmt.Errorf("fetch %s/%s: %w", owner, name, ErrEmpty)
	}
	return nil, fmt.Errorf("fetch %s/%s: %w", owner, name, err)
}

// existing returns fetch refspecs for the branches that exist remotely, and drops the local
// copies of the ones that no longer do.
func (c *Cache) existing(ctx context.Context, repo *git.Repository, token string, branches []string) ([]gitconfig.RefSpec, error) {
	remote, err := repo.Remote("origin")
	if err != nil {
		return nil, fmt.Errorf("remote origin: %w", err)
	}
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth(token)})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", remote.Config().URLs[0], err)
	}
	have := map[string]bool{}
	for _, r := range refs {
		have[r.Name().String()] = true
	}
	var specs []gitconfig.RefSpec
	for _, b := range branches {
		if have["refs/heads/"+b] {
			specs = append(specs, gitconfig.RefSpec(fmt.Sprintf("+refs/heads/%s:refs/remotes/origin/%s", b, b)))
		} else {
			_ = repo.Storer.RemoveReference(plumbing.NewRemoteReferenceName("origin", b))
		}
	}
	return specs, nil
}

// Head returns the fetched head of a remote branch, or the zero hash when it does not exist.
func Head(repo *git.Repository, branch string) plumbing.Hash {
	ref, err := repo.Reference(plumbing.NewRemoteReferenceName("origin", branch), true)
	if err != nil {
		return plumbing.ZeroHash
	}
	return ref.Hash()
}

// rejected reports whether a push failed because the remote branch was not where the lease
// said. This is the one place that reads go-git's error text: go-git v5 reports a lease or
// fast-forward check that fails on its side as an untyped "non-fast-forward update" error, and
// a ref update the server refuses as an untyped report-status error ("failed to update ref",
// "rejected"); callers see ErrStale and test it with errors.Is.
func rejected(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "non-fast-forward") || strings.Contains(msg, "failed to update ref") ||
		strings.Contains(msg, "rejected")
}

// deleteBranch removes a remote branch if it is still at old: ErrStale when it moved. The
// check reads the remote's heads first; git's receive-pack then deletes the branch only if it
// is still at what it advertised to the push, which closes most of the window in between.
func (c *Cache) deleteBranch(ctx context.Context, owner, name, token, branch string, old plumbing.Hash) error {
	defer remotewait.Since(ctx, time.Now())
	repo, err := c.open(owner, name)
	if err != nil {
		return err
	}
	ref := plumbing.ReferenceName("refs/heads/" + branch)
	if now, err := c.remoteHead(ctx, repo, token, ref); err != nil {
		return fmt.Errorf("delete %s/%s %s: %w", owner, name, branch, err)
	} else if now != old {
		return fmt.Errorf("delete %s/%s %s: at %s, not %s: %w", owner, name, branch, now, old, ErrStale)
	}
	err = repo.PushContext(ctx, &git.PushOptions{RemoteName: "origin", Auth: auth(token),
		RefSpecs: []gitconfig.RefSpec{gitconfig.RefSpec(":" + ref.String())}})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fmt.Errorf("delete %s/%s %s: %w", owner, name, branch, err)
	}
	_ = repo.Storer.RemoveReference(plumbing.NewRemoteReferenceName("origin", branch))
	_ = repo.Storer.RemoveReference(ref)
	return nil
}

// remoteHead lists the remote's refs and returns where ref points (zero when it does not exist).
func (c *Cache) remoteHead(ctx context.Context, repo *git.Repository, token string, ref plumbing.ReferenceName) (plumbing.Hash, error) {
	remote, err := repo.Remote("origin")
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("remote origin: %w", err)
	}
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth(token)})
	if err != nil && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return plumbing.ZeroHash, fmt.Errorf("list %s: %w", remote.Config().URLs[0], err)
	}
	for _, r := range refs {
		if r.Name() == ref {
			return r.Hash(), nil
		}
	}
	return plumbing.ZeroHash, nil
}
