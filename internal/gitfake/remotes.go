// Package gitfake serves bare git repositories from a folder, for unit tests of what reads
// and writes repositories through the git cache (file:// URLs, read by the git binary).
package gitfake

import (
	"io/fs"
	"path/filepath"

	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
)

// Remotes is a folder of bare repositories, owner/name.git.
type Remotes struct {
	t    testing.TB
	dir  string
	tick int64 // commit times, one second apart, so that hashes are stable
}

// New returns an empty folder of repositories below the test's temporary folder.
func New(t testing.TB) *Remotes { return &Remotes{t: t, dir: t.TempDir()} }

// URL is the web URL of the repositories, as the git cache wants it.
func (r *Remotes) URL() string { return "file://" + r.dir }

func (r *Remotes) open(repo envref.Repo) *git.Repository {
	r.t.Helper()
	path := filepath.Join(r.dir, repo.Owner, repo.Name+".git")
	g, err := git.PlainOpen(path)
	if err == nil {
		return g
	}
	g, err = git.PlainInit(path, true)
	if err != nil {
		r.t.Fatalf("create %s: %v", repo, err)
	}
	return g
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
