package render_test

import (
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/internal/preview"
	"github.com/kalypso-gitops/kalypso/render"
)

// gitWorld keeps the GitOps trees of a property test as git trees in a repository: the first
// tree (a pull request never merged) and an index brought up to date result by result.
type gitWorld struct {
	repo  *git.Repository
	first render.Tree
	index *gitops.Index
}

func newGitWorld(t *testing.T, tree render.Tree, res *render.Result) *gitWorld {
	t.Helper()
	repo, err := git.Init(memory.NewStorage(), nil)
	require.NoError(t, err)
	return &gitWorld{repo: repo, first: tree, index: gitops.Build(res)}
}

// write writes a flat tree whole and returns its root tree.
func (g *gitWorld) write(t *testing.T, tree render.Tree) plumbing.Hash {
	t.Helper()
	changes := make(map[string][]byte, len(tree))
	for p, c := range tree {
		changes[p] = append([]byte{}, c...)
	}
	h, err := gitops.Edit(g.repo, plumbing.ZeroHash, changes)
	require.NoError(t, err)
	return h
}

// requireSameGitTree checks the trees proposed over the previous step's tree prev and over
// the first tree: the incremental result got's, with the index brought up to date step by
// step, and the full result want's, with an index built from scratch, are the tree want.Apply
// makes of the same base written whole, hash for hash, and both list the changes render.Diff
// finds and measure the change as preview.Measure does; proposed again over the same base, the result is the same.
func (g *gitWorld) requireSameGitTree(t *testing.T, prev render.Tree, want, got *render.Result, where string) {
	t.Helper()
	g.index = g.index.Advance(got)
	require.True(t, g.index.Describes(got), where)
	if !got.HasTarget {
		return
	}
	fresh := gitops.Build(want)
	for _, base := range []render.Tree{prev, g.first} {
		next := want.Apply(base)
		expected, baseTree := g.write(t, next), g.write(t, base)
		full, err := gitops.Propose(g.repo.Storer, baseTree, want, fresh)
		require.NoError(t, err, where)
		inc, err := gitops.Propose(g.repo.Storer, baseTree, got, g.index)
		require.NoError(t, err, where)
		require.Equal(t, expected, full.Tree, "%s: the full result's tree", where)
		require.Equal(t, expected, inc.Tree, "%s: the incremental result's tree", where)
		size, err := g.index.Size(g.repo.Storer, baseTree, got.Root)()
		require.NoError(t, err, where)
		blast := preview.Measure(base, next, got.Root)
		require.Equal(t, blast, full.Blast(size), "%s: the guard's measure of the full result", where)
		require.Equal(t, blast, inc.Blast(size), "%s: the guard's measure of the incremental result", where)
		plan := render.Diff(base, next, got.Root)
		require.Equal(t, plan, render.GroupChanges(full.Changes(), got.Root), where)
		require.Equal(t, plan, render.GroupChanges(inc.Changes(), got.Root), where)
		require.Equal(t, plan, full.Plan, where)
		require.Equal(t, plan, inc.Plan, where)
		again, err := gitops.Propose(g.repo.Storer, baseTree, got, g.index)
		require.NoError(t, err, where)
		require.Equal(t, expected, again.Tree, "%s: the tree made again from the index's memo", where)
		require.Equal(t, plan, render.GroupChanges(again.Changes(), got.Root), where)
		require.Equal(t, plan, again.Plan, where)
		require.Equal(t, inc.Assignments(), again.Assignments(), where)
	}
}

// requireDeltaIsDiff checks that the part of the trees Delta gives, from the result r was
// computed from, has the changes of the whole trees (a preview's prev and next), measured the
// same, and that Folders counts the folders of the whole tree.
func requireDeltaIsDiff(t *testing.T, from, r *render.Result, where string) {
	t.Helper()
	prev, next, ok := r.Delta(from)
	if !r.HasTarget || !from.HasTarget {
		require.False(t, ok, where)
		return
	}
	require.True(t, ok, "%s: an incremental result is computed from the previous one", where)
	before := from.Apply(render.Tree{})
	after := r.Apply(before)
	require.Equal(t, render.Diff(before, after, r.Root), render.Diff(prev, next, r.Root), where)
	require.Equal(t, preview.ByClusterType(before, after, r.Root), preview.ByClusterType(prev, next, r.Root), where)
	want := preview.Measure(before, after, r.Root)
	got := preview.Measure(prev, next, r.Root)
	got.Assignments, got.ClusterTypes = from.Folders()
	require.Equal(t, want, got, where)
	_, _, ok = r.Delta(r)
	require.False(t, ok, "%s: a result is not computed from itself", where)
}
