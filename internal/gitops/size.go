package gitops

import (
	"fmt"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/kalypso-gitops/kalypso/internal/preview"
)

// Size is what a GitOps tree holds, as the guard of an environment counts it: the folders one
// level below the GitOps path (cluster types, and any other folder that is not a dot-folder)
// and the folders two levels below them (assignments).
type Size struct{ Assignments, ClusterTypes int }

// maxSizes bounds how many folders' sizes an index remembers.
const maxSizes = 1 << 16

// sizes remembers, by tree hash, how many folders a cluster-type folder holds: an index and
// the ones advanced from it share it.
type sizes struct {
	mu     sync.Mutex
	byTree map[plumbing.Hash]int
}

// Size returns a function that counts the tree's folders below the GitOps path root. It reads
// the folder at root and each folder below it whose hash the index has not seen: a base that
// did not change costs one tree read.
func (x *Index) Size(s storer.EncodedObjectStorer, tree plumbing.Hash, root string) func() (Size, error) {
	return func() (Size, error) { return x.size(s, tree, root) }
}

func (x *Index) size(s storer.EncodedObjectStorer, tree plumbing.Hash, root string) (Size, error) {
	var out Size
	dir, err := subtree(s, tree, root)
	if err != nil || dir.IsZero() {
		return out, err
	}
	t, err := object.GetTree(s, dir)
	if err != nil {
		return out, fmt.Errorf("read tree %s: %w", displayDir(root), err)
	}
	for _, e := range t.Entries {
		if e.Mode != filemode.Dir || strings.HasPrefix(e.Name, ".") {
			continue
		}
		n, err := x.folders(s, e.Hash, join(root, e.Name))
		if err != nil {
			return out, err
		}
		out.ClusterTypes++
		out.Assignments += n
	}
	return out, nil
}

// folders returns how many folders a tree holds.
func (x *Index) folders(s storer.EncodedObjectStorer, tree plumbing.Hash, dir string) (int, error) {
	m := x.sizes
	m.mu.Lock()
	n, ok := m.byTree[tree]
	m.mu.Unlock()
	if ok {
		return n, nil
	}
	t, err := object.GetTree(s, tree)
	if err != nil {
		return 0, fmt.Errorf("read tree %s: %w", dir, err)
	}
	for _, e := range t.Entries {
		if e.Mode == filemode.Dir {
			n++
		}
	}
	m.mu.Lock()
	if len(m.byTree) >= maxSizes {
		clear(m.byTree)
	}
	m.byTree[tree] = n
	m.mu.Unlock()
	return n, nil
}

// subtree returns the folder at path below tree, zero when there is none.
func subtree(s storer.EncodedObjectStorer, tree plumbing.Hash, path string) (plumbing.Hash, error) {
	if path == "" || tree.IsZero() {
		return tree, nil
	}
	for _, seg := range strings.Split(path, "/") {
		t, err := object.GetTree(s, tree)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read tree: %w", err)
		}
		next := plumbing.ZeroHash
		for _, e := range t.Entries {
			if e.Name == seg && e.Mode == filemode.Dir {
				next = e.Hash
			}
		}
		if next.IsZero() {
			return next, nil
		}
		tree = next
	}
	return tree, nil
}

// Blast measures the proposal as preview.MeasurePlan measures a plan, from the size of its base
// (see Index.Size) and whether each changed assignment folder is in the base and in the tree.
func (p *Proposal) Blast(before Size) preview.Blast {
	b := preview.Blast{Assignments: before.Assignments, ClusterTypes: before.ClusterTypes}
	touched := map[string]bool{}
	for _, g := range p.Plan.Groups {
		touched[g.ClusterType] = true
		if g.Assignment == "" {
			continue
		}
		switch v := p.Presence(g.ClusterType + "/" + g.Assignment); {
		case !v.Before:
			b.Added++
		case !v.After:
			b.Removed++
		default:
			b.Changed++
		}
	}
	b.Touched = len(touched)
	return b
}
