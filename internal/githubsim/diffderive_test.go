package githubsim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
)

// TestDerivedDiffEqualsTheWholeComparison changes every file of a branch, then moves it by random pushes (files added,
// changed, removed, changed back to the base, a directory replaced by a file) and checks, after
// each, that the diff from the base derived from the previous one equals comparing the two
// whole trees, and that the diff was indeed derived.
func TestDerivedDiffEqualsTheWholeComparison(t *testing.T) {
	sim, rp := newTestRepo(t)
	files := map[string]*string{}
	for i := range 2 * renameLimit {
		files[fmt.Sprintf("d%d/f%d.yaml", i%7, i)] = ptr(fmt.Sprintf("v: %d\n", i))
	}
	base, err := sim.CommitFiles("o", "r", "main", files, "base")
	require.NoError(t, err)
	baseTree := treeOf(t, rp, base)
	all := map[string]*string{}
	for name := range files {
		all[name] = ptr("changed on the branch\n")
	}
	_, err = sim.CommitFiles("o", "r", "main", all, "every file changed")
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 40 {
		edit := map[string]*string{}
		for range 1 + rng.IntN(20) {
			name := fmt.Sprintf("d%d/f%d.yaml", rng.IntN(8), rng.IntN(3*renameLimit))
			switch rng.IntN(4) {
			case 0:
				edit[name] = nil
			case 1:
				edit[name] = files[name] // back to the base, where it was there
			default:
				edit[name] = ptr(fmt.Sprintf("v: %d step %d\n", rng.Int(), step))
			}
		}
		if step == 20 {
			edit["d3"] = ptr("a file where a directory was\n")
			for name := range files {
				if len(name) > 3 && name[:3] == "d3/" {
					edit[name] = nil
				}
			}
		}
		head, err := sim.CommitFiles("o", "r", "main", edit, fmt.Sprintf("step %d", step))
		require.NoError(t, err)
		headTree := treeOf(t, rp, head)
		rp.mu.Lock()
		_, derived, _ := rp.derivedDiff(baseTree, headTree)
		got, gotErr := rp.diffTrees(baseTree, headTree)
		want, wantErr := rp.computeDiff(baseTree, headTree)
		rp.mu.Unlock()
		require.NoError(t, gotErr)
		require.NoError(t, wantErr)
		require.Equal(t, want, got, "step %d", step)
		if step > 0 && len(want) > renameLimit {
			require.True(t, derived, "step %d: derived from the previous diff", step)
		}
	}
}

func treeOf(t *testing.T, rp *repo, commit string) plumbing.Hash {
	t.Helper()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	c, err := rp.commitObj(plumbing.NewHash(commit))
	require.NoError(t, err)
	return c.TreeHash
}

// TestPushPayloadListsARenameAsRemovedAndAdded checks the file lists of a push commit: what is
// added, removed and modified, and a rename (which the diffs report as such) as a removal and
// an addition, as GitHub's push payloads list them.
func TestPushPayloadListsARenameAsRemovedAndAdded(t *testing.T) {
	sim, err := New(Options{Dir: t.TempDir()})
	require.NoError(t, err)
	inst := sim.CreateInstallation("o")
	require.NoError(t, sim.CreateRepo(inst, "o", "r", "main"))
	body := "a long enough body for rename detection to pair the two files\n"
	_, err = sim.CommitFiles("o", "r", "main", map[string]*string{"old/a.yaml": ptr(body), "b.yaml": ptr("b\n"), "c.yaml": ptr("c\n")}, "base")
	require.NoError(t, err)
	head, err := sim.CommitFiles("o", "r", "main", map[string]*string{
		"old/a.yaml": nil, "new/a.yaml": ptr(body), "b.yaml": ptr("b2\n"), "c.yaml": nil, "d.yaml": ptr("d\n")}, "change")
	require.NoError(t, err)
	rp := sim.lookupRepo("o", "r")
	rp.mu.Lock()
	defer rp.mu.Unlock()
	c, err := rp.commitObj(plumbing.NewHash(head))
	require.NoError(t, err)
	added, removed, modified := rp.changedPaths(c)
	require.Equal(t, []string{"d.yaml", "new/a.yaml"}, added)
	require.Equal(t, []string{"c.yaml", "old/a.yaml"}, removed)
	require.Equal(t, []string{"b.yaml"}, modified)
}
