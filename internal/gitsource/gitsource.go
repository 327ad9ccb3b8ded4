// Package gitsource reads control-plane sources out of git repositories with go-git.
package gitsource

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"strings"
	"testing/fstest"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// wanted tells which files of a tree a control plane can use: YAML and .sourceignore.
func wanted(name string) bool {
	ext := path.Ext(name)
	return ext == ".yaml" || ext == ".yml" || path.Base(name) == ".sourceignore"
}

// TreeFS returns the YAML files (and .sourceignore) of a commit's tree as a read-only FS.
// Options narrow it to a folder and leave files above a size unread.
func TreeFS(repo *git.Repository, commit plumbing.Hash, opts ...Option) (fs.FS, error) {
	var o treeOptions
	for _, opt := range opts {
		opt(&o)
	}
	c, err := repo.CommitObject(commit)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", commit, err)
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("read tree of %s: %w", commit, err)
	}
	out := treeFS{MapFS: fstest.MapFS{}, large: map[string]int64{}}
	err = tree.Files().ForEach(func(f *object.File) error {
		if !f.Mode.IsFile() || !wanted(f.Name) || !o.wants(f) {
			return nil
		}
		if o.maxBytes > 0 && f.Size > o.maxBytes {
			out.MapFS[f.Name] = &fstest.MapFile{Mode: 0o644}
			out.large[f.Name] = f.Size
			return nil
		}
		data, err := readBlob(f)
		if err != nil {
			return err
		}
		out.MapFS[f.Name] = &fstest.MapFile{Data: data, Mode: 0o644}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read tree of %s: %w", commit, err)
	}
	return out, nil
}

func readBlob(f *object.File) ([]byte, error) {
	r, err := f.Reader()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Name, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Name, err)
	}
	return data, nil
}

// Resolve finds the commit a branch name, tag, remote branch or hash refers to.
func Resolve(repo *git.Repository, rev string) (plumbing.Hash, error) {
	if plumbing.IsHash(rev) {
		h := plumbing.NewHash(rev)
		if _, err := repo.CommitObject(h); err == nil {
			return h, nil
		}
	}
	for _, name := range []plumbing.ReferenceName{
		plumbing.NewBranchReferenceName(rev),
		plumbing.NewRemoteReferenceName("origin", rev),
		plumbing.NewTagReferenceName(rev),
		plumbing.ReferenceName(rev),
	} {
		ref, err := repo.Reference(name, true)
		if err == nil {
			return ref.Hash(), nil
		}
		if !errors.Is(err, plumbing.ErrReferenceNotFound) {
			return plumbing.ZeroHash, fmt.Errorf("resolve %s: %w", rev, err)
		}
	}
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("resolve %q: %w", rev, err)
	}
	return *h, nil
}

// Sub returns the part of fsys below dir ("" or "." for all of it).
func Sub(fsys fs.FS, dir string) (fs.FS, error) {
	dir = strings.Trim(dir, "/")
	if dir == "" || dir == "." {
		return fsys, nil
	}
	return fs.Sub(fsys, dir)
}

// maxHistory bounds how far back FirstSeen walks.
const maxHistory = 10000

// FirstSeen returns the commit time of the oldest commit, on the first-parent chain from
// commit, from which on file has existed without interruption: how long the file has been
// there. It walks at most 10,000 commits; math.MaxInt64 means the file is not at commit.
func FirstSeen(repo *git.Repository, commit plumbing.Hash, file string) int64 {
	oldest := int64(math.MaxInt64)
	for i := 0; i < maxHistory && !commit.IsZero(); i++ {
		c, err := repo.CommitObject(commit)
		if err != nil {
			break
		}
		tree, err := c.Tree()
		if err != nil {
			break
		}
		if _, err := tree.FindEntry(file); err != nil {
			break
		}
		oldest = c.Committer.When.Unix()
		commit = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			commit = c.ParentHashes[0]
		}
	}
	return oldest
}
