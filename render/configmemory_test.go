package render

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// composedFleet is a fleet whose cluster types share some composed configs and not others.
func composedFleet() *fleet.Fleet {
	return fleet.New(fleet.Spec{ClusterTypes: 6, Workloads: 3, TargetsPerWorkload: 2, Configs: 8, Policies: 4})
}

// composedOf returns the composed config an engine gives an assignment, and whether it merges
// the ConfigMap named cm.
func composedOf(e *Engine, a *scheduling.Assignment, cm string) (*composedConfig, bool) {
	sel := e.config.set.Matching(a.ClusterType.Name, a.ClusterType.Labels, a.Target.Name, a.Target.Labels)
	c, _ := e.config.compose(sel)
	merges := slices.ContainsFunc(sel, func(i int) bool { return e.config.set.entries[i].origin.Name == cm })
	return c, merges
}

// changedConfigMap returns the name of the one ConfigMap whose data differs between snapshots.
func changedConfigMap(t *testing.T, before, after *scheduling.Snapshot) string {
	t.Helper()
	data := map[string]map[string]string{}
	for _, cm := range before.ConfigMaps {
		data[cm.Name] = cm.Data
	}
	var changed []string
	for _, cm := range after.ConfigMaps {
		if !slices.Equal(sortedTexts(data[cm.Name]), sortedTexts(cm.Data)) {
			changed = append(changed, cm.Name)
		}
	}
	require.Len(t, changed, 1)
	return changed[0]
}

func sortedTexts(m map[string]string) []string {
	out := make([]string, 0, 2*len(m))
	for k, v := range m {
		out = append(out, k+"\x00"+v)
	}
	slices.Sort(out)
	return out
}

// TestLaterEngineTakesComposedConfig checks that the engine of a later snapshot takes the
// composed configs of an earlier result whose ConfigMaps did not change (the same config, its
// texts made once), composes afresh those that merge the ConfigMap that changed, and renders
// what a cold engine renders.
func TestLaterEngineTakesComposedConfig(t *testing.T) {
	f := composedFleet()
	prev := Environment(scheduling.Load(f.Inputs()))
	require.NotEmpty(t, prev.composed.composed)
	edit := fleet.BenchEdits()[0] // memory: 8Gi → 16Gi in the config of one cluster type
	require.NoError(t, edit.Apply(f), edit.Name)
	snap := scheduling.Load(f.Inputs())
	changed := changedConfigMap(t, prev.Snapshot, snap)
	want := Environment(snap)

	e := NewEngine(snap, withWorkOf(prev))
	taken, composed := map[string]bool{}, map[string]bool{} // by inputs
	for _, a := range want.Assignments {
		files, err := e.Render(a)
		require.Nil(t, err, a.Key())
		require.Equal(t, want.Outputs.of(a.Key()).Map(), files.Map(), a.Key())
		c, merges := composedOf(e, a, changed)
		held, was := prev.composed.composed[c.inputs]
		if merges {
			require.False(t, was, "%s: a config that merges %s is composed again", a.Key(), changed)
			for _, h := range prev.composed.composed {
				require.NotEqual(t, mapIdentity(h.c.data), mapIdentity(c.data), a.Key())
			}
			require.Contains(t, c.yaml(), "16Gi", a.Key())
			composed[c.inputs] = true
			continue
		}
		require.True(t, was, a.Key())
		require.Same(t, held.c, c, "%s: the earlier result's composed config", a.Key())
		require.NotNil(t, c.pipedTexts[0].Load(), "%s: with its indented text", a.Key())
		taken[c.inputs] = true
	}
	require.NotEmpty(t, taken)
	require.NotEmpty(t, composed)

	old := mapIdentity(prev.composed.sources[changed].data)
	kept := e.configMemory()
	require.Len(t, kept.composed, len(taken)+len(composed))
	for _, h := range kept.composed {
		for _, src := range h.c.sources {
			require.NotEqual(t, old, mapIdentity(src), "no composed config of the changed ConfigMap's old data is kept")
		}
	}
}

// TestTemplateWritesNotIntoSharedComposedConfig checks that a template that writes into
// .ConfigData in a later render (directly and into a nested value) writes into its own copy:
// the composed configs it shares with the earlier result keep their data and texts.
func TestTemplateWritesNotIntoSharedComposedConfig(t *testing.T) {
	f := composedFleet()
	prev := Environment(scheduling.Load(f.Inputs()))
	before := map[string]string{}
	for key, h := range prev.composed.composed {
		before[key] = ToYaml(h.c.data)
		require.Equal(t, before[key], h.c.yaml())
		require.NotContains(t, before[key], "WRITTEN")
	}
	const print = "{{ toYaml .ConfigData | indent 2}}"
	write := `{{ $_ := set .ConfigData "WRITTEN" .DeploymentTargetName }}{{ with .ConfigData.RESOURCES }}{{ $_ := set . "memory" "1Ti" }}{{ end }}`
	require.NoError(t, fleet.Replace(f.Main, "templates/scheduler_v1alpha1_template_configmap.yaml", print, write+print))

	next, stats := Incremental(prev, scheduling.Load(f.Inputs()))
	require.False(t, stats.Full)
	require.Equal(t, len(next.Assignments), stats.AssignmentsRendered)
	require.Empty(t, next.Errors)
	for key, files := range next.Outputs.All() {
		cfg := string(files.File(ConfigFileYAML))
		require.Contains(t, cfg, "WRITTEN: "+strings.SplitN(key, "/", 2)[1], key)
		require.Contains(t, cfg, "memory: 1Ti", key)
	}
	require.Len(t, next.composed.composed, len(prev.composed.composed))
	for key, h := range next.composed.composed {
		require.Same(t, prev.composed.composed[key].c, h.c, "taken from the earlier result")
		require.Equal(t, before[key], ToYaml(h.c.data), "the shared data is unchanged")
		require.Equal(t, before[key], h.c.yaml(), "and so is its text")
		require.NotContains(t, *h.c.pipedTexts[0].Load(), "WRITTEN")
	}
}

// TestComposedConfigsKeptWithinBounds checks that a result keeps the composed configs its
// engine used, and those of the earlier result still valid for at most maxIdleResults results
// in a row without use.
func TestComposedConfigsKeptWithinBounds(t *testing.T) {
	f := composedFleet()
	res := Environment(scheduling.Load(f.Inputs()))
	all := len(res.composed.composed)
	for i := range maxIdleResults {
		e := NewEngine(res.Snapshot, withWorkOf(res)) // renders nothing
		res = &Result{Snapshot: res.Snapshot, configValues: e.config.values, composed: e.configMemory()}
		require.Len(t, res.composed.composed, all, "after %d results", i+1)
	}
	e := NewEngine(res.Snapshot, withWorkOf(res))
	a := scheduling.Schedule(res.Snapshot)[0]
	_, err := e.Render(a)
	require.Nil(t, err)
	used, _ := composedOf(e, a, "")
	mem := e.configMemory()
	require.Len(t, mem.composed, 1, "only the one used is left")
	require.Same(t, used, mem.composed[used.inputs].c)
	require.Zero(t, mem.composed[used.inputs].idle)
}

// TestResultsOfOneResultRenderAtOnce checks that two results computed at once from the same
// result (a pull request's preview while main renders), sharing its composed configs, render
// what a cold engine renders; run with -race.
func TestResultsOfOneResultRenderAtOnce(t *testing.T) {
	f := composedFleet()
	_, err := f.AddCanary(2)
	require.NoError(t, err)
	prev := Environment(scheduling.Load(f.Inputs()))
	var snaps []*scheduling.Snapshot
	for _, edit := range fleet.BenchEdits()[:3] {
		require.NoError(t, edit.Apply(f), edit.Name)
		snaps = append(snaps, scheduling.Load(f.Inputs()))
	}
	got := make([]*Result, len(snaps))
	var wg sync.WaitGroup
	for i, snap := range snaps {
		wg.Go(func() { got[i], _ = Incremental(prev, snap) })
	}
	wg.Wait()
	for i, snap := range snaps {
		require.Equal(t, Environment(snap).Outputs.Map(), got[i].Outputs.Map(), "snapshot %d", i)
	}
}

// TestComposedConfigsKeptAtMost checks that a result keeps at most so many composed configs,
// those its engine used first.
func TestComposedConfigsKeptAtMost(t *testing.T) {
	f := composedFleet()
	prev := Environment(scheduling.Load(f.Inputs()))
	require.Greater(t, len(prev.composed.composed), 3)
	e := NewEngine(prev.Snapshot, withWorkOf(prev))
	a := scheduling.Schedule(prev.Snapshot)[0]
	_, err := e.Render(a)
	require.Nil(t, err)
	used, _ := composedOf(e, a, "")
	mem := e.config.memory(e.slots, 3)
	require.Len(t, mem.composed, 3)
	require.Same(t, used, mem.composed[used.inputs].c, "the one used is kept")
	one := e.config.memory(e.slots, 1).composed
	require.Len(t, one, 1)
	require.Same(t, used, one[used.inputs].c)
}

// TestComposedConfigTakenWithItsSlots checks that a composed config taken by an engine with
// more step kinds keeps its indented texts in the slots they were in, and that an engine that
// numbers its step kinds afresh takes only the data and formatted texts.
func TestComposedConfigTakenWithItsSlots(t *testing.T) {
	f := composedFleet()
	prev := Environment(scheduling.Load(f.Inputs()))
	require.Len(t, prev.composed.slots, 1)
	const print = "{{ toYaml .ConfigData | indent 2}}"
	require.NoError(t, fleet.Replace(f.Main, "templates/scheduler_v1alpha1_template_configmap.yaml", print, print+"\n      copy:{{ toYaml .ConfigData | nindent 4}}"))
	snap := scheduling.Load(f.Inputs())
	want := Environment(snap)
	crowded := *prev.composed
	crowded.slots = maps.Clone(prev.composed.slots)
	for i := range maxInheritedSlots {
		crowded.slots.slot(pipeKey{fn: "toYaml", pipe: "indent", width: 100 + i})
	}
	for _, earlier := range []*configMemory{prev.composed, &crowded} {
		fresh := earlier == &crowded
		e := NewEngine(snap, withWorkOf(&Result{Snapshot: prev.Snapshot, configValues: prev.configValues, composed: earlier}))
		require.Len(t, e.slots, 2, "indent 2 and nindent 4, numbered afresh: %v", fresh)
		for _, a := range want.Assignments {
			files, err := e.Render(a)
			require.Nil(t, err, a.Key())
			require.Equal(t, want.Outputs.of(a.Key()).Map(), files.Map(), a.Key())
			c, _ := composedOf(e, a, "")
			old := earlier.composed[c.inputs].c
			require.NotSame(t, old, c, "%s: another slot", a.Key())
			require.Equal(t, mapIdentity(old.data), mapIdentity(c.data), a.Key())
			require.Equal(t, old.pipedTexts[0].Load() == c.pipedTexts[0].Load(), !fresh, "%s: the same indented text", a.Key())
		}
	}
}
