package githubsim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// A pull request's diff is the difference between its merge base and its head. When the head
// moves, GitHub's files list changes only on the paths the push changed; so, for a diff too
// large for rename detection, the simulator derives the new list from the previous one and the
// (hash-aware) difference between the two heads instead of comparing the two whole trees again:
// its cost follows the push, not the repository.

// lastDiff is the newest large diff computed from one tree.
type lastDiff struct {
	to    plumbing.Hash
	files []fileDiff
}

// derivedDiff returns the diff from a to b derived from the newest large diff from a, or false
// when there is none or the result is small enough for rename detection (then it is computed
// whole, so that renames are reported as GitHub does).
func (rp *repo) derivedDiff(a, b plumbing.Hash) ([]fileDiff, bool, error) {
	prev, ok := rp.lastDiffs.get(a)
	if !ok || a.IsZero() || len(prev.files) <= renameLimit {
		return nil, false, nil
	}
	updates, err := rp.pathsChangedSince(a, prev.to, b)
	if err != nil {
		return nil, false, err
	}
	out := make([]fileDiff, 0, len(prev.files)+len(updates))
	for _, d := range prev.files {
		if u, ok := updates[d.path]; ok {
			delete(updates, d.path)
			if u == nil {
				continue
			}
			d = *u
		}
		out = append(out, d)
	}
	for _, u := range updates {
		if u != nil {
			out = append(out, *u)
		}
	}
	if len(out) <= renameLimit {
		return nil, false, nil
	}
	slices.SortFunc(out, func(x, y fileDiff) int { return strings.Compare(x.path, y.path) })
	return out, true, nil
}

// pathsChangedSince compares the trees from and to and describes each changed path as it now
// differs from base: nil when it no longer differs.
func (rp *repo) pathsChangedSince(base, from, to plumbing.Hash) (map[string]*fileDiff, error) {
	tbase, err := rp.treeObj(base)
	if err != nil {
		return nil, err
	}
	tto, err := rp.optTree(to)
	if err != nil {
		return nil, err
	}
	out := map[string]*fileDiff{}
	err = rp.changedFiles(from, to, "", func(path string, now *object.TreeEntry) error {
		entry := object.ChangeEntry{}
		if now != nil {
			entry = object.ChangeEntry{Name: path, Tree: tto, TreeEntry: *now}
		}
		d, err := rp.diffAt(tbase, path, entry)
		out[path] = d
		return err
	})
	return out, err
}

// changedFiles calls fn for every file path whose entry differs between the trees a and b
// (zero = empty) with the entry b holds there (nil: none). Subtrees of equal hashes are neither
// read nor walked, so the cost follows the change, not the trees.
func (rp *repo) changedFiles(a, b plumbing.Hash, prefix string, fn func(string, *object.TreeEntry) error) error {
	if a == b {
		return nil
	}
	ea, err := rp.entriesOf(a)
	if err != nil {
		return err
	}
	eb, err := rp.entriesOf(b)
	if err != nil {
		return err
	}
	for name, x := range ea {
		y, ok := eb[name]
		if ok && x.Hash == y.Hash && x.Mode == y.Mode {
			continue
		}
		if err := rp.changedEntry(prefix+name, x, y, fn); err != nil {
			return err
		}
	}
	for name, y := range eb {
		if _, ok := ea[name]; !ok {
			if err := rp.changedEntry(prefix+name, object.TreeEntry{}, y, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// changedEntry reports the files under one path whose entries x (before) and y (after) differ;
// a zero entry is none.
func (rp *repo) changedEntry(path string, x, y object.TreeEntry, fn func(string, *object.TreeEntry) error) error {
	var dirA, dirB plumbing.Hash
	if x.Mode == filemode.Dir {
		dirA = x.Hash
	}
	if y.Mode == filemode.Dir {
		dirB = y.Hash
	}
	if !dirA.IsZero() || !dirB.IsZero() {
		if err := rp.changedFiles(dirA, dirB, path+"/", fn); err != nil {
			return err
		}
	}
	isFile := func(e object.TreeEntry) bool { return !e.Hash.IsZero() && e.Mode != filemode.Dir }
	switch {
	case isFile(y):
		return fn(path, &y)
	case isFile(x):
		return fn(path, nil)
	}
	return nil
}

// entriesOf returns a tree's entries by name (none for the zero hash).
func (rp *repo) entriesOf(h plumbing.Hash) (map[string]object.TreeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	t, err := rp.treeObj(h)
	if err != nil {
		return nil, err
	}
	out := make(map[string]object.TreeEntry, len(t.Entries))
	for _, e := range t.Entries {
		out[e.Name] = e
	}
	return out, nil
}

// diffAt describes how the file at path differs between the base tree and now (the entry the
// head holds there, if any), or nil when it does not.
func (rp *repo) diffAt(tbase *object.Tree, path string, now object.ChangeEntry) (*fileDiff, error) {
	old, err := tbase.FindEntry(path)
	if err != nil && err != object.ErrEntryNotFound && err != object.ErrDirectoryNotFound {
		return nil, fmt.Errorf("entry %s: %w", path, err)
	}
	ch := &object.Change{To: now}
	if old != nil && old.Mode != filemode.Dir {
		ch.From = object.ChangeEntry{Name: path, Tree: tbase, TreeEntry: *old}
	}
	if ch.From.Name == "" && ch.To.Name == "" {
		return nil, nil
	}
	if ch.From.Name != "" && ch.To.Name != "" && ch.From.TreeEntry.Hash == ch.To.TreeEntry.Hash && ch.From.TreeEntry.Mode == ch.To.TreeEntry.Mode {
		return nil, nil
	}
	d, err := rp.fileDiff(ch)
	if err != nil {
		return nil, err
	}
	return &d, nil
}
