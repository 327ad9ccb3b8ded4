package render_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// TestIncrementalEqualsFull applies random edits of every kind to generated control planes
// and checks, after every step, that the incremental result (computed from the previous
// incremental result) is the full render's: same assignments, outputs, failures and errors,
// and the same GitOps tree byte for byte. The incremental results run simple manifests
// compiled, the full renders run every manifest with text/template. The GitOps tree is also
// made as git trees (gitops.Propose), over the previous step's tree and over the first one:
// from the incremental result with its index brought up to date step by step, and from the
// full result with an index built from scratch, it is the same root tree hash as the flat
// tree written whole, with the same changes.
func TestIncrementalEqualsFull(t *testing.T) {
	const seeds, steps = 6, 120
	all := edits()
	done := map[string]int{}
	incremental, rendered, total := 0, 0, 0
	for seed := range uint64(seeds) {
		w := newWorld(seed)
		snap := scheduling.Load(w.inputs())
		require.Empty(t, snap.Errors, "the initial control plane is valid")
		prev, _ := render.Incremental(nil, snap)
		tree := prev.Apply(render.Tree{"README.md": []byte("the GitOps repo's own file")})
		g := newGitWorld(t, tree, prev)
		for step := range steps {
			e := all[w.rng.IntN(len(all))]
			for !e.apply(w) {
				e = all[w.rng.IntN(len(all))]
			}
			done[e.kind+"/"+e.op]++
			snap := scheduling.Load(w.inputs())
			got, stats := render.Incremental(prev, snap)
			want := render.Environment(snap, render.WithTextTemplateOnly())
			where := fmt.Sprintf("seed %d step %d (%s %s)", seed, step, e.kind, e.op)
			requireSameResult(t, want, got, where)
			next := want.Apply(tree)
			requireSameTree(t, next, got.Apply(tree), where)
			requireDesiredIsTree(t, got.Desired(tree), tree, next, where)
			g.requireSameGitTree(t, tree, want, got, where)
			if !stats.Full {
				requireDeltaIsDiff(t, prev, got, where)
				incremental++
				rendered += stats.AssignmentsRendered
				total += len(want.Assignments)
			}
			prev, tree = got, next
		}
	}
	for _, e := range all {
		require.Positive(t, done[e.kind+"/"+e.op], "edit %s %s never happened", e.kind, e.op)
	}
	require.Greater(t, incremental, seeds*steps/2, "most steps take the incremental path")
	require.Less(t, rendered, total/3, "incremental steps render a fraction of the assignments")
	t.Logf("%d steps, %d incremental rendering %d of %d assignments; edits: %v", seeds*steps, incremental, rendered, total, done)
}

// requireSameResult compares two results field by field.
func requireSameResult(t *testing.T, want, got *render.Result, where string) {
	t.Helper()
	require.Equal(t, want.Root, got.Root, where)
	require.Equal(t, want.HasTarget, got.HasTarget, where)
	require.Equal(t, errorLines(want.Errors), errorLines(got.Errors), where)
	require.Equal(t, want.Errors, got.Errors, where)
	require.Equal(t, want.Outputs.Map(), got.Outputs.Map(), where)
	require.Equal(t, want.Outputs.Len(), got.Outputs.Len(), where)
	require.Equal(t, want.Failed, got.Failed, where)
	require.Len(t, got.Assignments, len(want.Assignments), where)
	for i, a := range want.Assignments {
		b := got.Assignments[i]
		require.Equal(t, a.Key(), b.Key(), where)
		require.Equal(t, a.Policies, b.Policies, where)
		require.Equal(t, a.ClusterType, b.ClusterType, where)
		require.Equal(t, a.Target, b.Target, where)
	}
}

func requireSameTree(t *testing.T, want, got render.Tree, where string) {
	t.Helper()
	require.Equal(t, want.SortedPaths(), got.SortedPaths(), where)
	for p, content := range want {
		if !bytes.Equal(content, got[p]) {
			t.Fatalf("%s: %s differs:\n%s\nwant:\n%s", where, p, got[p], content)
		}
	}
}

// requireDesiredIsTree checks that d, made from prev, is the tree want: its length, every file
// walked once, and Get for every path of both trees.
func requireDesiredIsTree(t *testing.T, d *render.Desired, prev, want render.Tree, where string) {
	t.Helper()
	require.Equal(t, len(want), d.Len(), where)
	walked := render.Tree{}
	require.NoError(t, d.Walk(func(p string, c []byte) error {
		require.NotContains(t, walked, p, where)
		walked[p] = c
		return nil
	}))
	requireSameTree(t, want, walked, where)
	for _, tree := range []render.Tree{prev, want} {
		for p := range tree {
			c, ok := d.Get(p)
			w, inWant := want[p]
			require.Equal(t, inWant, ok, "%s: %s", where, p)
			require.True(t, bytes.Equal(w, c), "%s: %s", where, p)
		}
	}
}

func errorLines(errs scheduling.Errors) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// smallFleet renders a 10 × 40 fleet with a canary template on every other cluster type.
func smallFleet(t *testing.T) (*fleet.Fleet, *render.Result) {
	f := fleet.New(fleet.Spec{ClusterTypes: 10, Workloads: 8, TargetsPerWorkload: 5, Configs: 5, Policies: 4})
	_, err := f.AddCanary(2)
	require.NoError(t, err)
	res := render.Environment(scheduling.Load(f.Inputs()))
	require.Empty(t, res.Errors)
	return f, res
}

// TestIncrementalRendersOnlyWhatAChangeReaches checks the number of assignments each bench
// edit renders again, and that the result is still the full render's.
func TestIncrementalRendersOnlyWhatAChangeReaches(t *testing.T) {
	f, prev := smallFleet(t)
	want := map[string]int{
		"platform config of one cluster type":   40,     // ct-0 × every target
		"one workload edit":                     10 * 5, // every cluster type × the workload's targets
		"template used by 10% of cluster types": 5 * 40, // the canary is on every other cluster type here
		"policy stops selecting one workload":   0,      // its assignments are only removed
		"policy selects it again":               5 * 5,  // the workload's targets on the policy's cluster types
	}
	for _, e := range fleet.BenchEdits() {
		require.NoError(t, e.Apply(f))
		snap := scheduling.Load(f.Inputs())
		res, stats := render.Incremental(prev, snap)
		require.False(t, stats.Full, e.Name)
		require.Equal(t, want[e.Name], stats.AssignmentsRendered, e.Name)
		requireSameResult(t, render.Environment(snap), res, e.Name)
		prev = res
	}
}

func TestIncrementalWithoutChangesRendersNothing(t *testing.T) {
	f, prev := smallFleet(t)
	res, stats := render.Incremental(prev, scheduling.Load(f.Inputs()))
	require.Equal(t, render.Stats{}, stats)
	require.Equal(t, prev.Outputs.Map(), res.Outputs.Map())
	require.Equal(t, prev.Assignments, res.Assignments, "the earlier assignments are reused")
}

func TestIncrementalFallsBackToAFullRender(t *testing.T) {
	f, prev := smallFleet(t)
	res, stats := render.Incremental(nil, scheduling.Load(f.Inputs()))
	require.True(t, stats.Full)
	require.Equal(t, "no previous result", stats.Reason)
	require.Equal(t, len(res.Assignments), stats.AssignmentsRendered)

	require.NoError(t, fleet.Replace(f.Env, "gitops-repo.yaml", "path: .\n", "path: clusters\n"))
	res, stats = render.Incremental(prev, scheduling.Load(f.Inputs()))
	require.True(t, stats.Full)
	require.Equal(t, "the GitOpsRepo changed", stats.Reason)
	require.Equal(t, "clusters", res.Root)
}

func TestIncrementalDoesNotModifyThePreviousResult(t *testing.T) {
	f, prev := smallFleet(t)
	outputs, assignments := prev.Outputs.Len(), len(prev.Assignments)
	require.NoError(t, fleet.Replace(f.Env, f.ClusterTypeFile(1), "reconciler: argocd\n", "reconciler: missing\n"))
	delete(f.Env, f.ClusterTypeFile(2))
	res, stats := render.Incremental(prev, scheduling.Load(f.Inputs()))
	require.Equal(t, 80, stats.AssignmentsRendered+stats.AssignmentsRemoved)
	require.Len(t, res.Failed, 40)
	require.Equal(t, outputs, prev.Outputs.Len())
	require.Len(t, prev.Assignments, assignments)
	require.Empty(t, prev.Failed)
}
