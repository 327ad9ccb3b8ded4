// Package gitfake keeps git repositories in memory and serves them to the git cache, for
// unit tests of what reads and writes repositories. The repositories are served in process by
// go-git's server over the URL scheme "gitfake", which this package installs in go-git once
// per test binary: no git process is started and nothing is written to disk. A test must not
// change a repository while the code under test reads it from another goroutine.
package gitfake

import (
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
)

// Remotes is a set of repositories, owner/name, served below one URL.
type Remotes struct {
	t    testing.TB
	id   string
	tick int64 // commit times, one second apart, so that hashes are stable
}

// Scheme is the URL scheme the repositories are served under.
const Scheme = "gitfake"

var (
	install sync.Once
	served  sync.Map // endpoint path → *git.Repository
	sets    atomic.Int64
)

// loader finds the served repository of an endpoint.
type loader struct{}

// Load implements server.Loader.
func (loader) Load(ep *transport.Endpoint) (storer.Storer, error) {
	if repo, ok := served.Load(ep.Path); ok {
		return repo.(*git.Repository).Storer, nil
	}
	return nil, transport.ErrRepositoryNotFound
}

// New returns an empty set of repositories, forgotten when the test ends.
func New(t testing.TB) *Remotes {
	install.Do(func() { client.InstallProtocol(Scheme, server.NewClient(loader{})) })
	r := &Remotes{t: t, id: fmt.Sprintf("set%d", sets.Add(1))}
	t.Cleanup(func() {
		served.Range(func(k, _ any) bool {
			if strings.HasPrefix(k.(string), "/"+r.id+"/") {
				served.Delete(k)
			}
			return true
		})
	})
	return r
}

// URL is the web URL of the repositories, as the git cache wants it.
func (r *Remotes) URL() string { return Scheme + ":///" + r.id }

func (r *Remotes) open(repo envref.Repo) *git.Repository {
	r.t.Helper()
	key := "/" + r.id + "/" + repo.Owner + "/" + repo.Name + ".git"
	if g, ok := served.Load(key); ok {
		return g.(*git.Repository)
	}
	g, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		r.t.Fatalf("create %s: %v", repo, err)
	}
	actual, _ := served.LoadOrStore(key, g)
	return actual.(*git.Repository)
}

// Commit commits on a branch (created empty when missing): files with content are written,
// files with nil are deleted. It returns the new commit.
func (r *Remotes) Commit(repo envref.Repo, branch string, files map[string]*string, msg string) string {
	r.t.Helper()
	g := r.open(repo)
	parent, tree := r.head(g, branch), plumbing.ZeroHash
	if !parent.IsZero() {
		c, err := g.CommitObject(parent)
		if err != nil {
			r.t.Fatalf("read %s@%s: %v", repo, branch, err)
		}
		tree = c.TreeHash
	}
	changes := map[string][]byte{}
	for p, c := range files {
		changes[p] = nil
		if c != nil {
			changes[p] = []byte(*c)
		}
	}
	tree, err := gitops.Edit(g, tree, changes)
	if err != nil {
		r.t.Fatalf("write %s@%s: %v", repo, branch, err)
	}
	r.tick++
	commit, err := gitops.Commit(g, tree, parent, msg, time.Unix(1_700_000_000+r.tick, 0).UTC())
	if err != nil {
		r.t.Fatalf("commit %s@%s: %v", repo, branch, err)
	}
	r.setHead(g, branch, commit)
	return commit.String()
}

// CommitFS commits every file of fsys on a branch.
func (r *Remotes) CommitFS(repo envref.Repo, branch string, fsys fs.FS, edit func(path, content string) string, msg string) string {
	r.t.Helper()
	files := map[string]*string{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		text := string(data)
		if edit != nil {
			text = edit(p, text)
		}
		files[p] = &text
		return err
	})
	if err != nil {
		r.t.Fatalf("read files for %s: %v", repo, err)
	}
	return r.Commit(repo, branch, files, msg)
}

// SetHead moves a branch to a commit ("" deletes it), as someone else's push would.
func (r *Remotes) SetHead(repo envref.Repo, branch, commit string) {
	r.t.Helper()
	g := r.open(repo)
	if commit == "" {
		if err := g.Storer.RemoveReference(plumbing.NewBranchReferenceName(branch)); err != nil {
			r.t.Fatalf("delete %s@%s: %v", repo, branch, err)
		}
		return
	}
	r.setHead(g, branch, plumbing.NewHash(commit))
}

func (r *Remotes) setHead(g *git.Repository, branch string, commit plumbing.Hash) {
	r.t.Helper()
	if err := g.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), commit)); err != nil {
		r.t.Fatalf("set %s: %v", branch, err)
	}
}

// Head returns the commit of a branch, "" when it does not exist.
func (r *Remotes) Head(repo envref.Repo, branch string) string {
	r.t.Helper()
	if h := r.head(r.open(repo), branch); !h.IsZero() {
		return h.String()
	}
	return ""
}

func (r *Remotes) head(g *git.Repository, branch string) plumbing.Hash {
	ref, err := g.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		return plumbing.ZeroHash
	}
	return ref.Hash()
}

// File reads a file of a branch, "" when it or the branch does not exist.
func (r *Remotes) File(repo envref.Repo, branch, path string) string {
	r.t.Helper()
	g := r.open(repo)
	return string(gitops.ReadFile(g, r.head(g, branch), path))
}

// Message returns the message of a commit.
func (r *Remotes) Message(repo envref.Repo, commit string) string {
	r.t.Helper()
	c, err := r.open(repo).CommitObject(plumbing.NewHash(commit))
	if err != nil {
		r.t.Fatalf("read %s@%s: %v", repo, commit, err)
	}
	return c.Message
}

// Parent returns the first parent of a commit, "" for a root commit.
func (r *Remotes) Parent(repo envref.Repo, commit string) string {
	r.t.Helper()
	c, err := r.open(repo).CommitObject(plumbing.NewHash(commit))
	if err != nil {
		r.t.Fatalf("read %s@%s: %v", repo, commit, err)
	}
	if len(c.ParentHashes) == 0 {
		return ""
	}
	return c.ParentHashes[0].String()
}

// Str returns a pointer to s, for file maps.
func Str(s string) *string { return &s }

// SetRef points any reference, e.g. refs/pull/1/head, at a commit, as GitHub does for pull requests.
func (r *Remotes) SetRef(repo envref.Repo, ref, commit string) {
	r.t.Helper()
	g := r.open(repo)
	if err := g.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(ref), plumbing.NewHash(commit))); err != nil {
		r.t.Fatalf("set %s: %v", ref, err)
	}
}
