package render_test

import (
	"sync"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// TestIncrementalChainSharesOutputsSafely renders a long chain of random edits, each from the
// previous incremental result, enough for the outputs' layers to be folded into a new base
// several times. After each step the outputs are the full render's (contents and Len), while
// readers go through the earlier results concurrently (go test -race finds a shared map
// written); at the end every earlier result still has the outputs it had.
func TestIncrementalChainSharesOutputsSafely(t *testing.T) {
	const steps = 120
	f := fleet.New(fleet.Spec{ClusterTypes: 8, Workloads: 40, TargetsPerWorkload: 2, Configs: 5, Policies: 4})
	prev := render.Environment(scheduling.Load(f.Inputs()))
	require.Empty(t, prev.Errors)
	history, kept := []*render.Result{prev}, []map[string]render.Files{prev.Outputs.Map()}
	compactions, layered := 0, 0
	for step := range steps {
		require.NoError(t, chainEdit(f, step), "step %d", step)
		snap := scheduling.Load(f.Inputs())
		var readers sync.WaitGroup
		for _, old := range history[max(0, len(history)-3):] {
			readers.Go(func() { readAll(old) })
		}
		got, stats := render.Incremental(prev, snap)
		readers.Wait()
		require.False(t, stats.Full, "step %d", step)
		want := render.Environment(snap)
		require.Equal(t, want.Outputs.Len(), got.Outputs.Len(), "step %d", step)
		require.Equal(t, want.Outputs.Map(), got.Outputs.Map(), "step %d", step)
		require.Equal(t, want.Failed, got.Failed, "step %d", step)
		if render.OutputLayers(got.Outputs) > 0 {
			layered++
		} else {
			compactions++
		}
		history, kept = append(history, got), append(kept, got.Outputs.Map())
		prev = got
	}
	t.Logf("%d results with layers, %d compactions", layered, compactions)
	require.Greater(t, compactions, 5, "the layers are folded into a new base several times")
	require.Greater(t, layered, steps/2, "most results share their base with an earlier one")
	for i, old := range history {
		require.Equal(t, len(kept[i]), old.Outputs.Len(), "result %d", i)
		require.Equal(t, kept[i], old.Outputs.Map(), "result %d", i)
	}
}

// chainEdit makes the edit of a step: mostly a workload changed or changed back (1/40 of the
// assignments rendered again); every 9th step an argocd cluster type breaks, or is mended
// when broken (its assignments fail or render again); twice in 25 steps, a policy stops or
// starts again selecting a workload (its assignments are removed or added).
func chainEdit(f *fleet.Fleet, step int) error {
	switch {
	case step%25 == 12:
		return fleet.BenchEdits()[3].Apply(f)
	case step%25 == 24:
		return fleet.BenchEdits()[4].Apply(f)
	case step%9 == 4:
		return toggle(f.Env, f.ClusterTypeFile(1+2*(step/9%4)), "reconciler: argocd\n", "reconciler: missing\n")
	}
	return toggle(f.Workloads, f.WorkloadFile(step*7%f.Spec.Workloads), "stack: bench\n", "stack: changed\n")
}

// toggle replaces one text of a file by another, or back.
func toggle(fsys fstest.MapFS, path, one, other string) error {
	if err := fleet.Replace(fsys, path, one, other); err == nil {
		return nil
	}
	return fleet.Replace(fsys, path, other, one)
}

// readAll reads every output of a result, as a preview or a hub view does.
func readAll(res *render.Result) {
	for key, files := range res.Outputs.All() {
		if got, ok := res.Outputs.Get(key); !ok || got.Len() != files.Len() {
			panic("render: an output read twice differs: " + key)
		}
	}
}
