package githubsim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/stretchr/testify/require"
)

// TestTreeMergeEqualsAPathByPathMerge merges random pairs of edits of a tree and checks that
// the merge, which reads only the subtrees that differ, gives what merging every path of the
// flattened trees gives: the same tree, or a conflict for both.
func TestTreeMergeEqualsAPathByPathMerge(t *testing.T) {
	_, rp := newTestRepo(t)
	rp.mu.Lock()
	defer rp.mu.Unlock()
	rng := rand.New(rand.NewPCG(3, 4))
	base := map[string]string{}
	for i := range 60 {
		base[fmt.Sprintf("a%d/b%d/f%d", i%3, i%5, i)] = "one\ntwo\nthree\nfour\nfive\n"
	}
	blobs := map[string]plumbing.Hash{}
	b := writeFiles(t, rp, blobs, base)
	conflicts := 0
	for step := range 40 {
		ours, theirs := editFiles(rng, base, step, "ours"), editFiles(rng, base, step, "theirs")
		if step%7 == 0 { // one side unchanged
			ours = base
		}
		o, th := writeFiles(t, rp, blobs, ours), writeFiles(t, rp, blobs, theirs)
		want, wantErr := flatMerge(rp, b, o, th)
		got, err := rp.mergeTrees(b, o, th)
		if wantErr != nil {
			require.ErrorIs(t, err, errConflict, "step %d", step)
			conflicts++
			continue
		}
		require.NoError(t, err, "step %d", step)
		require.Equal(t, want, got, "step %d", step)
		if step%10 != 0 {
			continue
		}
		got, err = rp.mergeTrees(plumbing.ZeroHash, o, th)
		want, wantErr = flatMerge(rp, plumbing.ZeroHash, o, th)
		require.Equal(t, wantErr == nil, err == nil, "step %d without a base", step)
		require.Equal(t, want, got, "step %d without a base", step)
	}
	require.Positive(t, conflicts, "some edits conflict")
	require.Less(t, conflicts, 30, "most edits merge")
}

// TestTreeMergeOfAFileAndADirectoryConflicts checks that a file on one side where the other
// side has a directory is a conflict.
func TestTreeMergeOfAFileAndADirectoryConflicts(t *testing.T) {
	_, rp := newTestRepo(t)
	rp.mu.Lock()
	defer rp.mu.Unlock()
	blobs := map[string]plumbing.Hash{}
	b := writeFiles(t, rp, blobs, map[string]string{"x/y": "1\n"})
	o := writeFiles(t, rp, blobs, map[string]string{"x/y": "2\n"})
	th := writeFiles(t, rp, blobs, map[string]string{"x": "a file\n"})
	_, err := rp.mergeTrees(b, o, th)
	require.ErrorIs(t, err, errConflict)
}

// editFiles changes a few files of base: some lines changed (at the start for ours, at the end
// for theirs, so both sides' changes to one file merge), files added, removed, a directory
// emptied, and now and then the same change on both sides.
func editFiles(rng *rand.Rand, base map[string]string, step int, side string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for range 1 + rng.IntN(4) {
		i := rng.IntN(66) // mostly files of the base, now and then one it does not have
		name := fmt.Sprintf("a%d/b%d/f%d", i%3, i%5, i)
		switch rng.IntN(5) {
		case 0:
			delete(out, name)
		case 1:
			out[name] = fmt.Sprintf("same change %d\n", step)
		case 2:
			if side == "ours" {
				out[name] = "ONE\ntwo\nthree\nfour\nfive\n"
			} else {
				out[name] = "one\ntwo\nthree\nfour\nFIVE\n"
			}
		default:
			out[name] = fmt.Sprintf("%s %d\n", side, rng.Int())
		}
	}
	if rng.IntN(10) == 0 {
		for k := range out {
			if k[:2] == "a1" {
				delete(out, k)
			}
		}
	}
	return out
}

// writeFiles writes files as a tree, each text once (blobs: text → blob).
func writeFiles(t *testing.T, rp *repo, blobs map[string]plumbing.Hash, files map[string]string) plumbing.Hash {
	t.Helper()
	ed, err := rp.newTreeEditor(plumbing.ZeroHash)
	require.NoError(t, err)
	for path, text := range files {
		h, ok := blobs[text]
		if !ok {
			h, err = rp.writeBlob([]byte(text))
			require.NoError(t, err)
			blobs[text] = h
		}
		require.NoError(t, ed.set(path, filemode.Regular, h))
	}
	h, err := ed.write()
	require.NoError(t, err)
	return h
}

// flatMerge merges path by path over the three flattened trees: the merge as defined.
func flatMerge(rp *repo, base, ours, theirs plumbing.Hash) (plumbing.Hash, error) {
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
	paths := map[string]bool{}
	for p := range fo {
		paths[p] = true
	}
	for p := range ft {
		paths[p] = true
	}
	for p := range paths {
		b, o, t := fb[p], fo[p], ft[p]
		switch {
		case o == t, t == b:
			continue
		case o == b && t.hash.IsZero():
			err = ed.remove(p)
		case o == b:
			err = ed.set(p, t.mode, t.hash)
		case o.hash.IsZero() || t.hash.IsZero() || o.mode != t.mode:
			err = errConflict
		default:
			var h plumbing.Hash
			if h, err = rp.mergeFile(b.hash, o.hash, t.hash); err == nil {
				err = ed.set(p, o.mode, h)
			}
		}
		if err != nil {
			return plumbing.ZeroHash, errors.Join(err, errConflict)
		}
	}
	return ed.write()
}

// newTestRepo returns a simulator with one empty repository, o/r, and that repository.
func newTestRepo(t *testing.T) (*Server, *repo) {
	t.Helper()
	sim, err := New(Options{Dir: t.TempDir()})
	require.NoError(t, err)
	inst := sim.CreateInstallation("o")
	require.NoError(t, sim.CreateRepo(inst, "o", "r", "main"))
	return sim, sim.lookupRepo("o", "r")
}
