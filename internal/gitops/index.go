package gitops

import (
	"runtime"
	"strings"
	"sync"
	"weak"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/kalypso-gitops/kalypso/render"
)

// Index is the git form of what a rendered result generates, cluster type by cluster type:
// the tree of every assignment folder it renders and the assignments that failed (whose last
// output stays). It holds hashes only, not objects, so it is the same for any repository. It
// is made once from a result (Build), then brought up to date with each result computed from
// it (Advance), which hashes only the assignments that changed. An Index is not modified once
// made: cluster types that did not change are shared between an index and the next.
type Index struct {
	of    weak.Pointer[render.Result] // the result it describes
	cts   map[string]*ctIndex         // cluster type → its generated folders
	sizes *sizes                      // shared with the indexes advanced from this one
}

// ctIndex is one cluster type's part of an index. Its maps are not modified once it is in an
// index; memo remembers the last tree it made (see clusterType).
type ctIndex struct {
	folders map[string]plumbing.Hash // target → the tree of its rendered folder
	failed  map[string]bool          // targets whose assignment failed
	mu      sync.Mutex
	memo    *ctMemo
}

// ctMemo is the cluster type's folder as last made, what it was made of, and how it differs
// from its base folder.
type ctMemo struct {
	key         ctMemoKey
	tree        plumbing.Hash
	changes     []render.Change
	groups      []render.Group // changes, grouped
	assignments map[string]Presence
}

// ctMemoKey is what a cluster type's folder is made of, besides its part of the index.
type ctMemoKey struct {
	base               plumbing.Hash // the base folder
	dir                string        // the folder's path
	broken, incomplete bool
}

func newCTIndex() *ctIndex {
	return &ctIndex{folders: map[string]plumbing.Hash{}, failed: map[string]bool{}}
}

// clone returns a copy of the cluster type's part to modify, without the memo.
func (c *ctIndex) clone() *ctIndex {
	out := &ctIndex{folders: make(map[string]plumbing.Hash, len(c.folders)), failed: make(map[string]bool, len(c.failed))}
	for k, v := range c.folders {
		out.folders[k] = v
	}
	for k, v := range c.failed {
		out.failed[k] = v
	}
	return out
}

// Describes reports whether the index is the one of res.
func (x *Index) Describes(res *render.Result) bool {
	return x != nil && x.of == weak.Make(res)
}

// Advance returns the index of res: when res was computed from the result x describes (see
// render.Lineage), x with the assignments res changed hashed again; otherwise, or when x is
// nil, the index built from scratch.
func (x *Index) Advance(res *render.Result) *Index {
	switch {
	case x.Describes(res):
		return x
	case x == nil || res.Since.From != x.of:
		return Build(res)
	}
	next := &Index{of: weak.Make(res), cts: make(map[string]*ctIndex, len(x.cts)), sizes: x.sizes}
	for k, v := range x.cts {
		next.cts[k] = v
	}
	touched := map[string]bool{}
	for _, key := range res.Since.Keys {
		ct, target, ok := strings.Cut(key, "/")
		if !ok {
			continue
		}
		c := next.cts[ct]
		switch {
		case c == nil:
			c = newCTIndex()
		case !touched[ct]:
			c = c.clone()
		}
		touched[ct] = true
		next.cts[ct] = c
		delete(c.folders, target)
		delete(c.failed, target)
		if files, _ := res.Outputs.Get(key); files.Len() > 0 {
			c.folders[target] = folderTree(files).h
		} else if res.Failed[key] != nil {
			c.failed[target] = true
		}
	}
	for ct := range touched {
		if c := next.cts[ct]; len(c.folders) == 0 && len(c.failed) == 0 {
			delete(next.cts, ct)
		}
	}
	return next
}

// Build makes the index of a result from scratch, hashing every rendered folder on all cores.
func Build(res *render.Result) *Index {
	x := &Index{of: weak.Make(res), cts: map[string]*ctIndex{}, sizes: &sizes{byTree: map[plumbing.Hash]int{}}}
	keys := make([]string, 0, res.Outputs.Len())
	folders := make([]render.Files, 0, res.Outputs.Len())
	for key, files := range res.Outputs.All() {
		if files.Len() > 0 {
			keys, folders = append(keys, key), append(folders, files)
		}
	}
	trees := make([]plumbing.Hash, len(keys))
	var wg sync.WaitGroup
	workers := max(1, min(runtime.GOMAXPROCS(0), len(keys)/256))
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(keys); i += workers {
				trees[i] = folderTree(folders[i]).h
			}
		}()
	}
	wg.Wait()
	part := func(ct string) *ctIndex {
		c := x.cts[ct]
		if c == nil {
			c = newCTIndex()
			x.cts[ct] = c
		}
		return c
	}
	for i, key := range keys {
		if ct, target, ok := strings.Cut(key, "/"); ok {
			part(ct).folders[target] = trees[i]
		}
	}
	for key := range res.Failed {
		if ct, target, ok := strings.Cut(key, "/"); ok {
			part(ct).failed[target] = true
		}
	}
	return x
}

// folderTree is the tree object of an assignment's folder: its files, in name order.
func folderTree(files render.Files) *ownObject {
	var entries [3]object.TreeEntry
	n := 0
	_ = files.Each(func(name string, content []byte) error {
		entries[n] = object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: hashObject(plumbing.BlobObject, content)}
		n++
		return nil
	})
	return newObject(plumbing.TreeObject, encodeTree(entries[:n]))
}

// folderObjects are the objects of an assignment's folder: the names of its files, their
// blobs, and its tree.
func folderObjects(files render.Files) ([]string, []*ownObject, *ownObject) {
	names := make([]string, 0, 3)
	blobs := make([]*ownObject, 0, 3)
	entries := make([]object.TreeEntry, 0, 3)
	_ = files.Each(func(name string, content []byte) error {
		b := newObject(plumbing.BlobObject, content)
		names, blobs = append(names, name), append(blobs, b)
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: b.h})
		return nil
	})
	return names, blobs, newObject(plumbing.TreeObject, encodeTree(entries))
}
