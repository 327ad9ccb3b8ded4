// Package gitops builds GitOps commits in a local repository, touching only what changes.
package gitops

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Paths returns every file of a commit's tree with its blob hash, without reading any blob.
func Paths(repo *git.Repository, commit plumbing.Hash) (map[string]plumbing.Hash, plumbing.Hash, error) {
	c, err := repo.CommitObject(commit)
	if err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("read commit %s: %w", commit, err)
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("read tree of %s: %w", commit, err)
	}
	out := map[string]plumbing.Hash{}
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if err != nil {
			break
		}
		if entry.Mode.IsFile() {
			out[name] = entry.Hash
		}
	}
	return out, c.TreeHash, nil
}

// BlobHash is the git object id of a file with this content.
func BlobHash(content []byte) plumbing.Hash {
	return plumbing.ComputeHash(plumbing.BlobObject, content)
}

// Entry is the new state of a path in an edit: Data to write (Hash, if set, is its blob hash), or
// only the Hash of an existing blob to reuse; a nil *Entry deletes the path.
type Entry struct {
	Data []byte
	Hash plumbing.Hash
}

// Edit writes a new tree: base with changes applied (content, or nil to delete). Only the
// folders on the way to a changed path are rewritten; the rest of the tree is shared.
func Edit(repo *git.Repository, base plumbing.Hash, changes map[string][]byte) (plumbing.Hash, error) {
	entries := make(map[string]*Entry, len(changes))
	for p, c := range changes {
		if c != nil {
			entries[p] = &Entry{Data: c}
		} else {
			entries[p] = nil
		}
	}
	return EditEntries(repo, base, entries)
}

// EditEntries is Edit with entries that may reuse existing blobs.
func EditEntries(repo *git.Repository, base plumbing.Hash, changes map[string]*Entry) (plumbing.Hash, error) {
	byDir := map[string]map[string]*Entry{}
	for p, e := range changes {
		dir, name := path.Split(p)
		dir = strings.TrimSuffix(dir, "/")
		if byDir[dir] == nil {
			byDir[dir] = map[string]*Entry{}
		}
		byDir[dir][name] = e
	}
	return (&editor{repo: repo, byDir: byDir, children: childDirs(byDir)}).dir(base, "")
}

// editor rewrites the folders that hold changes.
type editor struct {
	repo     *git.Repository
	byDir    map[string]map[string]*Entry
	children map[string][]string // folder → its sub-folders that hold changes, sorted
}

// childDirs finds, for every folder on the way to a change, its sub-folders that hold changes.
func childDirs(byDir map[string]map[string]*Entry) map[string][]string {
	seen := map[string]map[string]bool{}
	for d := range byDir {
		for d != "" {
			parent, name := path.Split(d)
			parent = strings.TrimSuffix(parent, "/")
			if seen[parent] == nil {
				seen[parent] = map[string]bool{}
			}
			if seen[parent][name] {
				break
			}
			seen[parent][name] = true
			d = parent
		}
	}
	out := make(map[string][]string, len(seen))
	for d, names := range seen {
		for n := range names {
			out[d] = append(out[d], n)
		}
		sort.Strings(out[d])
	}
	return out
}

// dir rewrites the tree of folder dir (hash zero when it does not exist yet).
func (ed *editor) dir(hash plumbing.Hash, dir string) (plumbing.Hash, error) {
	repo := ed.repo
	entries := map[string]object.TreeEntry{}
	if !hash.IsZero() {
		t, err := object.GetTree(repo.Storer, hash)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read tree %s: %w", dir, err)
		}
		for _, e := range t.Entries {
			entries[e.Name] = e
		}
	}
	for name, e := range ed.byDir[dir] {
		if e == nil {
			delete(entries, name)
			continue
		}
		h := e.Hash
		if e.Data != nil {
			var err error
			if h, err = writeBlob(repo.Storer, e.Data); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		entries[name] = object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}
	}
	for _, sub := range ed.children[dir] {
		old := plumbing.ZeroHash
		if e, ok := entries[sub]; ok && e.Mode == filemode.Dir {
			old = e.Hash
		}
		h, err := ed.dir(old, path.Join(dir, sub))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if h.IsZero() {
			delete(entries, sub)
		} else {
			entries[sub] = object.TreeEntry{Name: sub, Mode: filemode.Dir, Hash: h}
		}
	}
	if len(entries) == 0 && dir != "" {
		return plumbing.ZeroHash, nil // an empty folder disappears
	}
	return writeTree(repo.Storer, entries)
}

func writeBlob(s storer.EncodedObjectStorer, content []byte) (plumbing.Hash, error) {
	obj := s.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write blob: %w", err)
	}
	if _, err := w.Write(content); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write blob: %w", err)
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write blob: %w", err)
	}
	return s.SetEncodedObject(obj)
}

func writeTree(s storer.EncodedObjectStorer, entries map[string]object.TreeEntry) (plumbing.Hash, error) {
	t := &object.Tree{}
	for _, e := range entries {
		t.Entries = append(t.Entries, e)
	}
	sort.Slice(t.Entries, func(i, j int) bool { return treeOrder(t.Entries[i]) < treeOrder(t.Entries[j]) })
	obj := s.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode tree: %w", err)
	}
	return s.SetEncodedObject(obj)
}

// treeOrder is git's order of tree entries: folders sort as if their name ended with "/".
func treeOrder(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// The identity of the app's commits, as the reference's.
const (
	signatureName  = "Kalypso Scheduler"
	signatureEmail = "kalypso.scheduler@email.com"
)

// Commit writes a commit of tree on parent with message and returns its hash.
func Commit(repo *git.Repository, tree, parent plumbing.Hash, message string, when time.Time) (plumbing.Hash, error) {
	sig := object.Signature{Name: signatureName, Email: signatureEmail, When: when}
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: tree}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	obj := repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode commit: %w", err)
	}
	return repo.Storer.SetEncodedObject(obj)
}

// Same reports whether commit has exactly this tree and parent: then it proposes the same change,
// whatever its message says.
func Same(repo *git.Repository, commit, tree, parent plumbing.Hash) bool {
	c, err := repo.CommitObject(commit)
	if err != nil || c.TreeHash != tree {
		return false
	}
	return len(c.ParentHashes) == 1 && c.ParentHashes[0] == parent || len(c.ParentHashes) == 0 && parent.IsZero()
}

// ReadFile returns a file of a commit, or nil when it does not exist.
func ReadFile(repo *git.Repository, commit plumbing.Hash, name string) []byte {
	c, err := repo.CommitObject(commit)
	if err != nil {
		return nil
	}
	f, err := c.File(name)
	if err != nil {
		return nil
	}
	s, err := f.Contents()
	if err != nil {
		return nil
	}
	return []byte(s)
}

// TreeOf returns the root tree of a commit.
func TreeOf(repo *git.Repository, commit plumbing.Hash) (plumbing.Hash, error) {
	c, err := repo.CommitObject(commit)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read commit %s: %w", commit, err)
	}
	return c.TreeHash, nil
}
