package fleet

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

func TestGenerateLoadsWithoutErrors(t *testing.T) {
	for _, spec := range []Spec{
		{ClusterTypes: 6, Workloads: 5, TargetsPerWorkload: 3, Configs: 5, Policies: 4},
		{ClusterTypes: 7, Workloads: 3, TargetsPerWorkload: 2, Configs: 9, Policies: 3, Environment: "stage"},
		{ClusterTypes: 2, Workloads: 2, TargetsPerWorkload: 1, Configs: 1, Policies: 1},
	} {
		f := New(spec)
		snap := scheduling.Load(f.Inputs())
		require.Empty(t, snap.Errors, "%+v", spec)
		require.False(t, snap.Incomplete)
		require.Len(t, snap.ClusterTypes, spec.ClusterTypes)
		require.Len(t, snap.Targets, spec.Workloads*spec.TargetsPerWorkload)
		require.Len(t, snap.Policies, spec.Policies)
		require.Len(t, snap.ConfigMaps, spec.Configs)
		require.Len(t, snap.Templates, 4)
		require.Equal(t, MainCommit, snap.BaseRepo.Spec.Commit)

		assignments := scheduling.Schedule(snap)
		require.Len(t, assignments, f.Assignments())
		require.Equal(t, spec.ClusterTypes*spec.Workloads*spec.TargetsPerWorkload, len(assignments))
	}
}

func TestGenerateRendersEveryAssignment(t *testing.T) {
	spec := Spec{ClusterTypes: 4, Workloads: 3, TargetsPerWorkload: 2, Configs: 5, Policies: 4}
	res := render.Environment(scheduling.Load(Generate(spec)))
	require.Empty(t, res.Errors)
	require.Equal(t, 24, res.Outputs.Len())
	out := res.Outputs.Map()["ct-1/wl-2-t-1"]
	require.Contains(t, string(out.File(render.ReconcilerFile)), "kind: Application")
	require.Contains(t, string(res.Outputs.Map()["ct-0/wl-0-t-0"].File(render.ReconcilerFile)), "kind: Kustomization")
	config := string(out.File(render.ConfigFileYAML))
	for _, key := range []string{"ENVIRONMENT: dev", "REGION: region-1", "CLUSTER_SIZE: size-0", "- geo-region-1", "memory: 4Gi"} {
		require.Contains(t, config, key)
	}
	require.Contains(t, string(res.Outputs.Map()["ct-0/wl-0-t-0"].File(render.ConfigFileYAML)), "CLUSTER_NAME: ct-0")
}

func TestEveryAssignmentComposesSeveralConfigs(t *testing.T) {
	f := New(DefaultSpec())
	snap := scheduling.Load(f.Inputs())
	var sources []render.ConfigSource
	for _, cm := range snap.ConfigMaps {
		sources = append(sources, render.ParseConfigMap(cm.Name, cm.Labels, cm.Data))
	}
	set := render.NewConfigSet(sources, nil)
	dt := snap.Targets[0]
	for _, ct := range snap.ClusterTypes {
		n := len(set.Matching(ct.Name, ct.Labels, dt.Name, dt.Labels))
		require.True(t, n >= 3 && n <= 5, "%s composes %d configs", ct.Name, n)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	spec := Spec{ClusterTypes: 5, Workloads: 4, TargetsPerWorkload: 3, Configs: 5, Policies: 4}
	a, b := New(spec), New(spec)
	for _, pair := range [][2]fstest.MapFS{{a.Env, b.Env}, {a.Main, b.Main}, {a.Workloads, b.Workloads}} {
		require.Equal(t, pair[0], pair[1])
	}
}

func TestEditsAreSeenByTheNextLoad(t *testing.T) {
	f := New(Spec{ClusterTypes: 2, Workloads: 2, TargetsPerWorkload: 2, Configs: 1, Policies: 1})
	in := f.Inputs()
	require.Len(t, scheduling.Schedule(scheduling.Load(in)), 8)

	path := f.WorkloadFile(1)
	text := string(f.Workloads[path].Data)
	cut := strings.Index(text, "    - name: t-1")
	f.Workloads[path] = file(text[:cut])
	delete(f.Env, f.ClusterTypeFile(0))
	snap := scheduling.Load(in)
	require.Empty(t, snap.Errors)
	require.Len(t, scheduling.Schedule(snap), 3)
}
