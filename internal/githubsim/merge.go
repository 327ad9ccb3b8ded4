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
)

// errConflict reports a merge that needs a human.
var errConflict = errors.New("merge conflict")

// mergeTrees merges ours and theirs against their merge base tree. Files
// changed on both sides are merged line by line with `git merge-file`.
func (rp *repo) mergeTrees(base, ours, theirs plumbing.Hash) (plumbing.Hash, error) {
	fb, err := rp.flatten(base)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	fo, err := rp.flatten(ours)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	ft, err := rp.flatten(theirs)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	ed, err := rp.newTreeEditor(ours)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for p, t := range unionPaths(fo, ft) {
		if err := rp.mergePath(ed, p, fb[p], fo[p], t); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return ed.write()
}

// unionPaths maps every path changed on theirs (or present only in ours) to theirs' entry.
func unionPaths(ours, theirs map[string]fileEntry) map[string]fileEntry {
	out := map[string]fileEntry{}
	for p, e := range theirs {
		out[p] = e
	}
	for p := range ours {
		if _, ok := out[p]; !ok {
			out[p] = fileEntry{}
		}
	}
	return out
}

func (rp *repo) mergePath(ed *treeEditor, p string, b, o, t fileEntry) error {
	switch {
	case o == t, t == b:
		return nil
	case o == b:
		if t.hash.IsZero() {
			return ed.remove(p)
		}
		return ed.set(p, t.mode, t.hash)
	}
	if o.hash.IsZero() || t.hash.IsZero() || o.mode != t.mode || o.mode == filemode.Submodule {
		return fmt.Errorf("%s: %w", p, errConflict)
	}
	h, err := rp.mergeFile(b.hash, o.hash, t.hash)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return ed.set(p, o.mode, h)
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
