package githubsim

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// All methods in this file expect rp.mu to be held.

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)
var shortSHA = regexp.MustCompile(`^[0-9a-f]{4,39}$`)

// errNoObject reports a missing git object or ref.
var errNoObject = errors.New("object not found")

func (rp *repo) writeObject(t plumbing.ObjectType, encode func(plumbing.EncodedObject) error) (plumbing.Hash, error) {
	obj := rp.git.Storer.NewEncodedObject()
	obj.SetType(t)
	if err := encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode %s: %w", t, err)
	}
	h, err := rp.git.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store %s: %w", t, err)
	}
	return h, nil
}

func (rp *repo) writeBlob(data []byte) (plumbing.Hash, error) {
	return rp.writeObject(plumbing.BlobObject, func(o plumbing.EncodedObject) error {
		w, err := o.Writer()
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
		return w.Close()
	})
}

// writeTree stores a tree, sorting entries as git does.
func (rp *repo) writeTree(entries []object.TreeEntry) (plumbing.Hash, error) {
	sortTreeEntries(entries)
	t := &object.Tree{Entries: entries}
	return rp.writeObject(plumbing.TreeObject, t.Encode)
}

func (rp *repo) writeCommit(c *object.Commit) (plumbing.Hash, error) {
	return rp.writeObject(plumbing.CommitObject, c.Encode)
}

func sortTreeEntries(entries []object.TreeEntry) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
}

func (rp *repo) commitObj(h plumbing.Hash) (*object.Commit, error) {
	c, err := object.GetCommit(rp.git.Storer, h)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, errNoObject)
	}
	return c, nil
}

func (rp *repo) treeObj(h plumbing.Hash) (*object.Tree, error) {
	t, err := object.GetTree(rp.git.Storer, h)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, errNoObject)
	}
	return t, nil
}

func (rp *repo) blobData(h plumbing.Hash) ([]byte, error) {
	b, err := object.GetBlob(rp.git.Storer, h)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, errNoObject)
	}
	r, err := b.Reader()
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	return data, nil
}

func (rp *repo) objectType(h plumbing.Hash) (plumbing.ObjectType, bool) {
	o, err := rp.git.Storer.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return plumbing.InvalidObject, false
	}
	return o.Type(), true
}

// refHash returns the target of a fully qualified ref.
func (rp *repo) refHash(name string) (plumbing.Hash, bool) {
	ref, err := rp.git.Storer.Reference(plumbing.ReferenceName(name))
	if err != nil || ref.Type() != plumbing.HashReference {
		return plumbing.ZeroHash, false
	}
	return ref.Hash(), true
}

func (rp *repo) branchHash(branch string) (plumbing.Hash, bool) {
	return rp.refHash("refs/heads/" + branch)
}

// refs lists every hash ref (no HEAD) by full name.
func (rp *repo) refs() (map[string]plumbing.Hash, error) {
	iter, err := rp.git.Storer.IterReferences()
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	out := map[string]plumbing.Hash{}
	err = iter.ForEach(func(r *plumbing.Reference) error {
		if r.Type() == plumbing.HashReference && strings.HasPrefix(r.Name().String(), "refs/") {
			out[r.Name().String()] = r.Hash()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	return out, nil
}

// resolve turns a SHA, branch, tag or qualified ref into a commit.
func (rp *repo) resolve(ref string) (*object.Commit, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, errNoObject
	}
	if fullSHA.MatchString(ref) {
		return rp.commitObj(plumbing.NewHash(ref))
	}
	for _, name := range []string{ref, "refs/" + ref, "refs/heads/" + ref, "refs/tags/" + ref} {
		if !strings.HasPrefix(name, "refs/") {
			continue
		}
		if h, ok := rp.refHash(name); ok {
			return rp.peelCommit(h)
		}
	}
	if shortSHA.MatchString(ref) {
		h, err := rp.git.ResolveRevision(plumbing.Revision(ref))
		if err == nil {
			return rp.commitObj(*h)
		}
	}
	return nil, fmt.Errorf("ref %q: %w", ref, errNoObject)
}

func (rp *repo) peelCommit(h plumbing.Hash) (*object.Commit, error) {
	if tag, err := object.GetTag(rp.git.Storer, h); err == nil {
		return tag.Commit()
	}
	return rp.commitObj(h)
}

// reopen drops cached pack indexes after git wrote to the repository.
func (rp *repo) reopen() error {
	g, err := openStore(rp.dir)
	if err != nil {
		return fmt.Errorf("reopen %s: %w", rp.dir, err)
	}
	if c, ok := rp.git.Storer.(io.Closer); ok {
		_ = c.Close()
	}
	rp.git = g
	return nil
}

// openStore opens a bare repository keeping its pack files open, so that reading many objects
// does not reopen a pack for each one.
func openStore(dir string) (*git.Repository, error) {
	st := filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
	g, err := git.Open(st, nil)
	if err != nil {
		return nil, fmt.Errorf("githubsim: open %s: %w", dir, err)
	}
	return g, nil
}

// reachable returns every commit reachable from the given tips.
func (rp *repo) reachable(tips ...plumbing.Hash) (map[plumbing.Hash]bool, error) {
	seen := map[plumbing.Hash]bool{}
	stack := append([]plumbing.Hash{}, tips...)
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h.IsZero() || seen[h] {
			continue
		}
		c, err := rp.commitObj(h)
		if err != nil {
			return nil, err
		}
		seen[h] = true
		stack = append(stack, c.ParentHashes...)
	}
	return seen, nil
}

// commitsBetween lists commits reachable from head but not from base,
// oldest first (parents before children).
func (rp *repo) commitsBetween(base, head plumbing.Hash) ([]*object.Commit, error) {
	exclude, err := rp.reachable(base)
	if err != nil {
		return nil, err
	}
	var out []*object.Commit
	seen := map[plumbing.Hash]bool{}
	var visit func(h plumbing.Hash) error
	visit = func(h plumbing.Hash) error {
		if h.IsZero() || exclude[h] || seen[h] {
			return nil
		}
		seen[h] = true
		c, err := rp.commitObj(h)
		if err != nil {
			return err
		}
		for _, p := range c.ParentHashes {
			if err := visit(p); err != nil {
				return err
			}
		}
		out = append(out, c)
		return nil
	}
	return out, visit(head)
}

// isAncestor reports whether a is reachable from b (a == b counts).
func (rp *repo) isAncestor(a, b plumbing.Hash) (bool, error) {
	if a == b {
		return true, nil
	}
	set, err := rp.reachable(b)
	if err != nil {
		return false, err
	}
	return set[a], nil
}

// mergeBase returns a best common ancestor of a and b.
func (rp *repo) mergeBase(a, b plumbing.Hash) (plumbing.Hash, bool, error) {
	ca, err := rp.commitObj(a)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	cb, err := rp.commitObj(b)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	bases, err := ca.MergeBase(cb)
	if err != nil {
		return plumbing.ZeroHash, false, fmt.Errorf("merge base: %w", err)
	}
	if len(bases) == 0 {
		return plumbing.ZeroHash, false, nil
	}
	return bases[0].Hash, true, nil
}
