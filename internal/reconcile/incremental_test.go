package reconcile

import (
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

func TestResultsRenderOnlyWhatChangedPerEnvironment(t *testing.T) {
	f := fleet.New(fleet.Spec{ClusterTypes: 4, Workloads: 3, TargetsPerWorkload: 2, Configs: 5, Policies: 4})
	c := newResults()
	dev := envref.Env{Installation: 1, ControlPlane: envref.Repo{Owner: "org", Name: "cp"}, Name: "dev"}
	stage := dev
	stage.Name = "stage"

	res, stats := c.render(dev, scheduling.Load(f.Inputs()))
	require.True(t, stats.Full, "cold start")
	require.Equal(t, 24, res.Outputs.Len())
	_, stats = c.render(stage, scheduling.Load(f.Inputs()))
	require.True(t, stats.Full, "one entry per environment")

	require.NoError(t, fleet.Replace(f.Workloads, f.WorkloadFile(1), "stack: bench\n", "stack: other\n"))
	snap := scheduling.Load(f.Inputs())
	res, stats = c.render(dev, snap)
	require.False(t, stats.Full)
	require.Equal(t, 4*2, stats.AssignmentsRendered, "the workload's targets on every cluster type")
	require.Equal(t, render.Environment(snap).Outputs.Map(), res.Outputs.Map())
	require.Same(t, res, c.entries[dev].result)
	require.Equal(t, snap.Sources, c.entries[dev].sources)

	c.drop(dev)
	_, stats = c.render(dev, snap)
	require.True(t, stats.Full, "a dropped entry means a full render")
}

func TestPeekKeepsTheEntry(t *testing.T) {
	f := fleet.New(fleet.Spec{ClusterTypes: 2, Workloads: 2, TargetsPerWorkload: 1, Configs: 1, Policies: 1})
	c := newResults()
	dev := envref.Env{Name: "dev"}
	kept, _ := c.render(dev, scheduling.Load(f.Inputs()))
	delete(f.Env, f.ClusterTypeFile(0))
	peeked := c.peek(dev, scheduling.Load(f.Inputs()))
	require.Equal(t, 2, peeked.Outputs.Len())
	require.Same(t, kept, c.entries[dev].result)
	require.Equal(t, 4, kept.Outputs.Len())
}

// TestRenderLimitsReachTheRenderer: the reconciler renders within the limits it is given (an
// output limit no assignment fits fails them all, naming the setting), when it keeps the
// result and when it only peeks.
func TestRenderLimitsReachTheRenderer(t *testing.T) {
	f := fleet.New(fleet.Spec{ClusterTypes: 2, Workloads: 1, TargetsPerWorkload: 1, Configs: 1, Policies: 1})
	limits := WithRenderLimits(render.Limits{MaxAssignmentBytes: 10})
	kept, _ := New(nil, nil, limits).results.render(envref.Env{Name: "dev"}, scheduling.Load(f.Inputs()))
	peeked := New(nil, nil, limits).results.peek(envref.Env{Name: "dev"}, scheduling.Load(f.Inputs()))
	for _, res := range []*render.Result{kept, peeked} {
		require.Zero(t, res.Outputs.Len())
		require.Len(t, res.Failed, 2)
		for _, err := range res.Failed {
			require.Contains(t, err.Msg, render.SettingMaxAssignmentBytes)
		}
	}
	res, _ := New(nil, nil).results.render(envref.Env{Name: "dev"}, scheduling.Load(f.Inputs()))
	require.Equal(t, 2, res.Outputs.Len(), "the default limits fit")
}

// Each environment has its own caches of what loading its sources found (read from git,
// parsed), forgotten with its entry.
func TestLoadCachesPerEnvironment(t *testing.T) {
	c := newResults()
	dev, stage := envref.Env{Name: "dev"}, envref.Env{Name: "stage"}
	p := c.loadCaches(dev)
	require.NotNil(t, p.trees)
	require.NotNil(t, p.parses)
	require.Same(t, p, c.loadCaches(dev))
	require.NotSame(t, p, c.loadCaches(stage))
	require.NotSame(t, p.trees, c.loadCaches(stage).trees)
	c.drop(dev)
	require.NotSame(t, p, c.loadCaches(dev), "dropped with the environment")
}
