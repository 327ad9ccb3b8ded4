package gitsource

import (
	"slices"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// declKey identifies what scheduling.LoadDeclarations finds in main: the declarations depend
// only on the files of the .environments folder (its tree), on the .sourceignore that applies
// and on the limits they were read with.
type declKey struct {
	envs, ignore plumbing.Hash
	limits       limits
}

// declarations is scheduling.LoadDeclarations of main at commit head, read with opts. Through a
// cache it is found once per declKey, so that a load whose .environments folder did not change
// parses nothing of it. The result is shared: its Errors are for the caller to copy.
func declarations(repo *git.Repository, head plumbing.Hash, opts []Option) (*scheduling.Declarations, error) {
	var o treeOptions
	for _, opt := range opts {
		opt(&o)
	}
	fsys, err := TreeFS(repo, head, opts...)
	if err != nil {
		return nil, err
	}
	src := scheduling.Source{FS: fsys, Prefix: MainBranch + ":"}
	key, ok := declKeyOf(repo, head, fsys, &o)
	if !ok {
		return scheduling.LoadDeclarations(src), nil
	}
	if d, ok := lookup(o.cache, (*Cache).declsPart, key); ok {
		return d, nil
	}
	d := scheduling.LoadDeclarations(src)
	store(o.cache, (*Cache).declsPart, key, d, nil)
	return d, nil
}

// declKeyOf returns the key of the declarations of main at head, read as fsys, and whether they
// may be kept: there is a cache, main was read (not refused whole: that depends on every file)
// and it has an .environments folder.
func declKeyOf(repo *git.Repository, head plumbing.Hash, fsys any, o *treeOptions) (declKey, bool) {
	if t, ok := fsys.(treeFS); o.cache == nil || !ok || t.refused != nil {
		return declKey{}, false
	}
	key, _, err := sourceAt(repo, head, o)
	if err != nil {
		return declKey{}, false
	}
	e, err := find(repo, key.tree, scheduling.EnvironmentsDir)
	if err != nil || e == nil || e.Mode != filemode.Dir {
		return declKey{}, false
	}
	return declKey{envs: e.Hash, ignore: key.ignore, limits: key.limits}, true
}

// errorsOf is a copy of the declarations' errors that the caller may extend.
func errorsOf(d *scheduling.Declarations) scheduling.Errors { return slices.Clone(d.Errors) }
