package gitcache

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// Remote names a repository of the cache and the token that reads and writes it.
type Remote struct {
	Owner, Name string
	Token       string
}

// Session is one use of a cached repository, under its lock: the branches fetched when it
// began and what it pushes. It is only valid inside the function given to Use.
type Session struct {
	ctx    context.Context
	c      *Cache
	remote Remote
	// Repo is the local repository. Its objects never change; its references only through
	// the session.
	Repo *git.Repository
}

// Use is the one way to read or write a cached repository: it locks it, fetches branches
// (every branch when none is named) and calls fn with the session, releasing the lock when fn
// returns. fn must not keep the session or the repository. A fetch error ends Use before fn;
// an empty remote repository is ErrEmpty.
func (c *Cache) Use(ctx context.Context, r Remote, branches []string, fn func(*Session) error) error {
	unlock := c.lock(r.Owner, r.Name)
	defer unlock()
	repo, err := c.fetch(ctx, r.Owner, r.Name, r.Token, branches...)
	if err != nil {
		return err
	}
	return fn(&Session{ctx: ctx, c: c, remote: r, Repo: repo})
}

// UseCached is Use without fetching: the repository as an earlier Use left it. A repository
// never fetched is empty.
func (c *Cache) UseCached(r Remote, fn func(*Session) error) error {
	unlock := c.lock(r.Owner, r.Name)
	defer unlock()
	repo, err := c.open(r.Owner, r.Name)
	if err != nil {
		return err
	}
	return fn(&Session{ctx: context.Background(), c: c, remote: r, Repo: repo})
}

// Head returns the fetched head of a branch, or the zero hash when it does not exist.
func (s *Session) Head(branch string) plumbing.Hash { return Head(s.Repo, branch) }

// Push sets a remote branch to commit if it still is at old (zero: the branch must not exist);
// it returns an error that is ErrStale when someone else moved the branch first.
func (s *Session) Push(branch string, commit, old plumbing.Hash) error {
	return s.c.push(s.ctx, s.remote.Owner, s.remote.Name, s.remote.Token, branch, commit, old)
}

// Delete removes a remote branch if it is still at old.
func (s *Session) Delete(branch string, old plumbing.Hash) error {
	return s.c.deleteBranch(s.ctx, s.remote.Owner, s.remote.Name, s.remote.Token, branch, old)
}

// FetchPull fetches a pull request's commits through this repository's own refs (never from a
// fork): GitHub's test merge refs/pull/N/merge when it has one, else refs/pull/N/head. It
// returns the commit and which of the two it is ("merge" or "head"); ErrNoPull when neither exists.
func (s *Session) FetchPull(number int) (plumbing.Hash, string, error) {
	if number <= 0 {
		return plumbing.ZeroHash, "", fmt.Errorf("pull request %d: %w", number, ErrNoPull)
	}
	return s.c.fetchPull(s.ctx, s.Repo, s.remote.Token, number)
}
