package githubsim

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// treeEditor applies path-level changes to a git tree and writes only the
// subtrees that changed. The caller holds rp.mu.
type treeEditor struct {
	rp   *repo
	root *treeNode
}

type treeNode struct {
	entries map[string]*treeItem
}

// treeItem is a tree entry; for a directory, sub is loaded on demand and a
// zero hash marks it as changed.
type treeItem struct {
	mode filemode.FileMode
	hash plumbing.Hash
	sub  *treeNode
}

// fileEntry is a non-directory entry of a flattened tree.
type fileEntry struct {
	mode filemode.FileMode
	hash plumbing.Hash
}

func (rp *repo) newTreeEditor(base plumbing.Hash) (*treeEditor, error) {
	e := &treeEditor{rp: rp, root: &treeNode{entries: map[string]*treeItem{}}}
	if base.IsZero() {
		return e, nil
	}
	root, err := e.load(base)
	if err != nil {
		return nil, err
	}
	e.root = root
	return e, nil
}

func (e *treeEditor) load(h plumbing.Hash) (*treeNode, error) {
	t, err := e.rp.treeObj(h)
	if err != nil {
		return nil, err
	}
	n := &treeNode{entries: make(map[string]*treeItem, len(t.Entries))}
	for _, en := range t.Entries {
		n.entries[en.Name] = &treeItem{mode: en.Mode, hash: en.Hash}
	}
	return n, nil
}

// dir walks to the directory at parts, loading and marking each level as
// changed; with create it makes missing directories.
func (e *treeEditor) dir(parts []string, create bool) (*treeNode, error) {
	node := e.root
	for _, part := range parts {
		item, ok := node.entries[part]
		if !ok || item.mode != filemode.Dir {
			if !create {
				return nil, fmt.Errorf("directory %q: %w", part, errNoObject)
			}
			item = &treeItem{mode: filemode.Dir, sub: &treeNode{entries: map[string]*treeItem{}}}
			node.entries[part] = item
		}
		if item.sub == nil {
			sub, err := e.load(item.hash)
			if err != nil {
				return nil, err
			}
			item.sub = sub
		}
		item.hash = plumbing.ZeroHash
		node = item.sub
	}
	return node, nil
}

func splitPath(p string) ([]string, string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil, "", fmt.Errorf("empty path")
	}
	parts := strings.Split(p, "/")
	for _, s := range parts {
		if s == "" || s == "." || s == ".." || s == ".git" {
			return nil, "", fmt.Errorf("invalid path %q", p)
		}
	}
	return parts[:len(parts)-1], parts[len(parts)-1], nil
}

// set puts an entry at path; a directory entry replaces the whole subtree.
func (e *treeEditor) set(path string, mode filemode.FileMode, h plumbing.Hash) error {
	dirs, name, err := splitPath(path)
	if err != nil {
		return err
	}
	node, err := e.dir(dirs, true)
	if err != nil {
		return err
	}
	node.entries[name] = &treeItem{mode: mode, hash: h}
	return nil
}

// remove deletes the entry at path; a missing path is an error.
func (e *treeEditor) remove(path string) error {
	dirs, name, err := splitPath(path)
	if err != nil {
		return err
	}
	node, err := e.dir(dirs, false)
	if err != nil {
		return err
	}
	if _, ok := node.entries[name]; !ok {
		return fmt.Errorf("path %q: %w", path, errNoObject)
	}
	delete(node.entries, name)
	return nil
}

// write stores every changed tree and returns the root tree hash. A directory left without
// files is dropped, as git has no empty directories.
func (e *treeEditor) write() (plumbing.Hash, error) {
	h, err := e.writeNode(e.root)
	if err == nil && h.IsZero() {
		return e.rp.writeTree(nil)
	}
	return h, err
}

// writeNode stores a changed tree and its changed subtrees; zero when nothing is left of it.
func (e *treeEditor) writeNode(n *treeNode) (plumbing.Hash, error) {
	entries := make([]object.TreeEntry, 0, len(n.entries))
	for name, item := range n.entries {
		h := item.hash
		if item.mode == filemode.Dir && item.sub != nil && h.IsZero() {
			var err error
			if h, err = e.writeNode(item.sub); err != nil {
				return plumbing.ZeroHash, err
			}
			if h.IsZero() {
				continue
			}
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: item.mode, Hash: h})
	}
	if len(entries) == 0 {
		return plumbing.ZeroHash, nil
	}
	return e.rp.writeTree(entries)
}

// flatten lists every non-directory entry under a tree by full path.
func (rp *repo) flatten(h plumbing.Hash) (map[string]fileEntry, error) {
	out := map[string]fileEntry{}
	if h.IsZero() {
		return out, nil
	}
	return out, rp.walkTree(h, "", func(path string, en object.TreeEntry) error {
		if en.Mode != filemode.Dir {
			out[path] = fileEntry{mode: en.Mode, hash: en.Hash}
		}
		return nil
	})
}

// walkTree visits entries in git order, descending into directories.
func (rp *repo) walkTree(h plumbing.Hash, prefix string, fn func(string, object.TreeEntry) error) error {
	t, err := rp.treeObj(h)
	if err != nil {
		return err
	}
	for _, en := range t.Entries {
		path := prefix + en.Name
		if err := fn(path, en); err != nil {
			return err
		}
		if en.Mode == filemode.Dir {
			if err := rp.walkTree(en.Hash, path+"/", fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// entryAt returns the entry at path under a tree ("" is the root itself).
func (rp *repo) entryAt(root plumbing.Hash, path string) (object.TreeEntry, error) {
	path = strings.Trim(path, "/")
	if path == "" {
		return object.TreeEntry{Name: "", Mode: filemode.Dir, Hash: root}, nil
	}
	t, err := rp.treeObj(root)
	if err != nil {
		return object.TreeEntry{}, err
	}
	en, err := t.FindEntry(path)
	if err != nil {
		return object.TreeEntry{}, fmt.Errorf("path %q: %w", path, errNoObject)
	}
	return *en, nil
}
