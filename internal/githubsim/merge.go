package githubsim

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// errConflict reports a merge that needs a human.
var errConflict = errors.New("merge conflict")

// mergeTrees merges ours and theirs against their merge base tree (zero: empty), as if path
// by path: a path changed on one side only takes that side, and files changed on both sides
// are merged line by line with `git merge-file`. It reads only the subtrees that differ: a
// subtree equal on two sides is decided by its hash, so the cost follows the change.
func (rp *repo) mergeTrees(base, ours, theirs plumbing.Hash) (plumbing.Hash, error) {
	h, _, err := rp.mergeDir("", base, ours, theirs)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if h.IsZero() { // everything removed: the empty tree
		return rp.writeTree(nil)
	}
	return h, nil
}

// mergeDir merges the directory at path; empty reports that nothing is left of it.
func (rp *repo) mergeDir(path string, base, ours, theirs plumbing.Hash) (h plumbing.Hash, empty bool, err error) {
	switch {
	case ours == theirs || theirs == base:
		return ours, ours.IsZero(), nil
	case ours == base:
		return theirs, theirs.IsZero(), nil
	}
	b, err := rp.entriesOf(base)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	o, err := rp.entriesOf(ours)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	t, err := rp.entriesOf(theirs)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	out := make([]object.TreeEntry, 0, max(len(o), len(t)))
	for name := range unionNames(o, t) {
		en, ok, err := rp.mergeEntry(path+name, b[name], o[name], t[name])
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if ok {
			en.Name = name
			out = append(out, en)
		}
	}
	if len(out) == 0 {
		return plumbing.ZeroHash, true, nil
	}
	h, err = rp.writeTree(out)
	return h, false, err
}

// mergeEntry merges one name of a directory (a zero entry: absent on that side); ok is false
// when nothing is left of it.
func (rp *repo) mergeEntry(path string, b, o, t object.TreeEntry) (object.TreeEntry, bool, error) {
	switch {
	case sameEntry(o, t) || sameEntry(t, b):
		return o, !o.Hash.IsZero(), nil
	case sameEntry(o, b):
		return t, !t.Hash.IsZero(), nil
	case isDirOrAbsent(o) && isDirOrAbsent(t):
		h, empty, err := rp.mergeDir(path+"/", dirHash(b), o.Hash, t.Hash)
		return object.TreeEntry{Mode: filemode.Dir, Hash: h}, !empty, err
	case o.Mode == filemode.Dir || t.Mode == filemode.Dir: // a file on one side, a directory on the other
		return object.TreeEntry{}, false, fmt.Errorf("%s: %w", path, errConflict)
	}
	if b.Mode == filemode.Dir {
		b = object.TreeEntry{}
	}
	if sameEntry(t, b) {
		return o, !o.Hash.IsZero(), nil
	}
	if sameEntry(o, b) {
		return t, !t.Hash.IsZero(), nil
	}
	if o.Hash.IsZero() || t.Hash.IsZero() || o.Mode != t.Mode || o.Mode == filemode.Submodule {
		return object.TreeEntry{}, false, fmt.Errorf("%s: %w", path, errConflict)
	}
	h, err := rp.mergeFile(b.Hash, o.Hash, t.Hash)
	if err != nil {
		return object.TreeEntry{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return object.TreeEntry{Mode: o.Mode, Hash: h}, true, nil
}

// unionNames is the set of names on either side.
func unionNames(ours, theirs map[string]object.TreeEntry) map[string]bool {
	out := make(map[string]bool, max(len(ours), len(theirs)))
	for name := range ours {
		out[name] = true
	}
	for name := range theirs {
		out[name] = true
	}
	return out
}

func sameEntry(x, y object.TreeEntry) bool {
	return x.Hash == y.Hash && (x.Hash.IsZero() || x.Mode == y.Mode)
}

func isDirOrAbsent(e object.TreeEntry) bool { return e.Hash.IsZero() || e.Mode == filemode.Dir }

// dirHash is the tree of a directory entry, zero for a file or an absent entry.
func dirHash(e object.TreeEntry) plumbing.Hash {
	if e.Mode != filemode.Dir {
		return plumbing.ZeroHash
	}
	return e.Hash
}

// mergeFile runs `git merge-file` on three blobs (a zero base is empty).
func (rp *repo) mergeFile(base, ours, theirs plumbing.Hash) (plumbing.Hash, error) {
	dir, err := os.MkdirTemp("", "githubsim-merge-")
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	names := []string{"ours", "base", "theirs"}
	for i, h := range []plumbing.Hash{ours, base, theirs} {
		var data []byte
		if !h.IsZero() {
			if data, err = rp.blobData(h); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, names[i]), data, 0o600); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("merge temp file: %w", err)
		}
	}
	cmd := exec.Command("git", "merge-file", "-p", "--quiet", "ours", "base", "theirs")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return plumbing.ZeroHash, errConflict
	}
	return rp.writeBlob(out)
}

// mergeResult returns the tree of merging head into base.
func (rp *repo) mergeResult(baseTip, head plumbing.Hash) (plumbing.Hash, error) {
	hc, err := rp.commitObj(head)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if ff, err := rp.isAncestor(baseTip, head); err != nil || ff {
		return hc.TreeHash, err
	}
	bc, err := rp.commitObj(baseTip)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	mb, ok, err := rp.mergeBase(baseTip, head)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	mbTree := plumbing.ZeroHash
	if ok {
		mbc, err := rp.commitObj(mb)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		mbTree = mbc.TreeHash
	}
	return rp.mergeTrees(mbTree, bc.TreeHash, hc.TreeHash)
}

// isMergeable reports whether the pull request merges without conflicts.
func (s *Server) isMergeable(rp *repo, pr *pullRequest) bool {
	tip, ok := rp.branchHash(pr.base)
	if !ok {
		return false
	}
	_, err := rp.mergeResult(tip, plumbing.NewHash(pr.headSHA))
	return err == nil
}

func mergeError(err error) error {
	if errors.Is(err, errConflict) {
		return newError(http.StatusMethodNotAllowed, "Pull Request is not mergeable")
	}
	return err
}
