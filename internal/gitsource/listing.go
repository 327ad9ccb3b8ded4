package gitsource

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// listing is what a tree holds that a control plane can use: its wanted files (YAML and
// .sourceignore) with their blobs and sizes, and its subtrees, each listed the same way. It
// depends only on the tree's hash, so a cached listing serves every tree of that hash.
type listing struct {
	files []listedFile
	dirs  []listedDir
}

type listedFile struct {
	name string
	entry
}

type listedDir struct {
	name string
	sub  *listing
}

// listHash lists the tree of hash h, through the cache: a tree listed before is not decoded
// again, and a blob whose size is known is not looked up again.
func listHash(repo *git.Repository, c *Cache, h plumbing.Hash, depth int) (*listing, error) {
	if l, ok := lookup(c, (*Cache).treesPart, h); ok {
		return l, nil
	}
	if depth > maxDepth {
		return nil, object.ErrMaxTreeDepth
	}
	tree, err := repo.TreeObject(h)
	if err != nil {
		return nil, err
	}
	l := &listing{}
	for _, e := range tree.Entries {
		if err := checkName(e.Name); err != nil {
			return nil, err
		}
		switch {
		case e.Mode == filemode.Dir:
			sub, err := listHash(repo, c, e.Hash, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s/%w", e.Name, err)
			}
			l.dirs = append(l.dirs, listedDir{name: e.Name, sub: sub})
		case e.Mode.IsFile() && wanted(e.Name):
			size, err := blobSize(repo, c, e.Hash)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", e.Name, err)
			}
			l.files = append(l.files, listedFile{name: e.Name, entry: entry{hash: e.Hash, size: size}})
		}
	}
	store(c, (*Cache).treesPart, h, l, countTree)
	return l, nil
}

// blobSize is the size of a blob, read from its object's header.
func blobSize(repo *git.Repository, c *Cache, h plumbing.Hash) (int64, error) {
	if n, ok := lookup(c, (*Cache).sizesPart, h); ok {
		return n, nil
	}
	n, err := repo.Storer.EncodedObjectSize(h)
	if err != nil {
		return 0, err
	}
	store(c, (*Cache).sizesPart, h, n, nil)
	return n, nil
}

// addTo adds the files of the listing to entries, below prefix ("" or a folder ending in "/").
func (l *listing) addTo(entries map[string]entry, prefix string) {
	for _, f := range l.files {
		entries[prefix+f.name] = f.entry
	}
	for _, d := range l.dirs {
		d.sub.addTo(entries, prefix+d.name+"/")
	}
}

// maxDepth bounds how deep trees are listed, as go-git's tree walker bounds it.
const maxDepth = 1024

// errBadName is the error of a tree entry whose name cannot be a path's part.
var errBadName = errors.New("malformed tree: invalid entry name")

// checkName refuses an entry name that is not one part of a path.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("%w %q", errBadName, name)
	}
	return nil
}

// find returns the entry at p of the tree of hash root (p not empty), nil when there is none.
func find(repo *git.Repository, root plumbing.Hash, p string) (*object.TreeEntry, error) {
	parts := strings.Split(p, "/")
	h := root
	for i, part := range parts {
		tree, err := repo.TreeObject(h)
		if err != nil {
			return nil, err
		}
		var e *object.TreeEntry
		for j := range tree.Entries {
			if tree.Entries[j].Name == part {
				e = &tree.Entries[j]
				break
			}
		}
		switch {
		case e == nil:
			return nil, nil
		case i == len(parts)-1:
			return e, nil
		case e.Mode != filemode.Dir:
			return nil, nil
		}
		h = e.Hash
	}
	return nil, nil
}
