package render

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// TestIncrementalReusesParsedManifests checks that Incremental takes the parsed manifests of
// the templates whose text did not change from the previous result's engine, and parses
// again those of a template that changed; TestIncrementalEqualsFull checks the outputs.
func TestIncrementalReusesParsedManifests(t *testing.T) {
	f := fleet.New(fleet.Spec{ClusterTypes: 10, Workloads: 3, TargetsPerWorkload: 2, Configs: 5, Policies: 4})
	_, err := f.AddCanary(2)
	require.NoError(t, err)
	prev := Environment(scheduling.Load(f.Inputs()))
	withoutEngine := 0
	for _, edit := range fleet.BenchEdits()[1:4] { // one workload, the canary template, a policy
		require.NoError(t, edit.Apply(f), edit.Name)
		snap := scheduling.Load(f.Inputs())
		next, stats := Incremental(prev, snap)
		require.False(t, stats.Full, edit.Name)
		if stats.AssignmentsRendered == 0 {
			require.Equal(t, fmt.Sprint(prev.templates), fmt.Sprint(next.templates), "%s: no engine, the templates of the result it comes from", edit.Name)
			require.Equal(t, Environment(snap).Errors, next.Errors, edit.Name)
			withoutEngine++
			prev = next
			continue
		}
		require.Equal(t, len(prev.templates), len(next.templates), edit.Name)
		parsedAgain := 0
		for name, tpl := range next.templates {
			old := prev.templates[name]
			require.NotSame(t, old, tpl, "%s: a template of the new engine", edit.Name)
			for i, p := range tpl.parsed {
				changed := tpl.tpl.Spec.Manifests[i].Value != old.tpl.Spec.Manifests[i].Value
				require.Equal(t, changed, p != old.parsed[i], "%s: %s[%d] parsed again", edit.Name, name, i)
				if changed {
					parsedAgain++
				}
			}
		}
		require.Equal(t, edit.Name == fleet.BenchEdits()[2].Name, parsedAgain > 0, edit.Name)
		prev = next
	}
	require.Equal(t, 1, withoutEngine, "the policy's change renders nothing")
}

// BenchmarkNewEngine measures what every incremental render with something to render pays
// before it renders: the templates parsed and compiled (or their parsed manifests taken from
// the previous result's engine), config and schemas indexed.
func BenchmarkNewEngine(b *testing.B) {
	snap := scheduling.Load(fleet.New(fleet.DefaultSpec()).Inputs())
	prev := &Result{templates: NewEngine(snap).templates}
	for name, opts := range map[string][]Option{"parsed": nil, "reused": {withTemplatesOf(prev)}} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				NewEngine(snap, opts...)
			}
		})
	}
}

// TestIncrementalSharesUnchangedFiles checks that an assignment rendered again keeps the
// skeletons of its earlier output for the files that did not change: after an edit of the
// platform config of one cluster type, its assignments share their reconciler and namespace
// with the previous result, and only their platform config is new.
func TestIncrementalSharesUnchangedFiles(t *testing.T) {
	f := fleet.New(fleet.Spec{ClusterTypes: 10, Workloads: 3, TargetsPerWorkload: 2, Configs: 5, Policies: 4})
	prev := Environment(scheduling.Load(f.Inputs()))
	edit := fleet.BenchEdits()[0]
	require.NoError(t, edit.Apply(f), edit.Name)
	next, stats := Incremental(prev, scheduling.Load(f.Inputs()))
	require.False(t, stats.Full)
	require.Positive(t, stats.AssignmentsRendered)
	changed := 0
	for _, key := range next.Since.Keys {
		was, _ := prev.Outputs.Get(key)
		now, ok := next.Outputs.Get(key)
		require.True(t, ok, key)
		require.Same(t, was.rec, now.rec, "%s: reconciler", key)
		require.Same(t, was.nsf, now.nsf, "%s: namespace", key)
		if was.cfg != now.cfg {
			require.NotEqual(t, was.File(ConfigFileYAML), now.File(ConfigFileYAML), key)
			changed++
		}
	}
	require.Equal(t, stats.AssignmentsRendered, changed, "every platform config rendered again changed")
}

// TestIncrementalTakesTargetValues checks that a full render keeps the escaped values of
// every deployment target it rendered, that a result derived from it passes them on, and that
// an engine given them escapes the values of no target it has them for, only those of a
// target that changed.
func TestIncrementalTakesTargetValues(t *testing.T) {
	f := fleet.New(fleet.Spec{ClusterTypes: 4, Workloads: 3, TargetsPerWorkload: 2, Configs: 5, Policies: 4})
	prev := Environment(scheduling.Load(f.Inputs()))
	targets := map[*scheduling.DeploymentTarget]bool{}
	for _, a := range prev.Assignments {
		targets[a.Target] = true
	}
	require.Len(t, prev.targets, len(targets))
	for dt := range targets {
		require.NotNil(t, prev.targets[dt], dt.Name)
	}

	e := NewEngine(prev.Snapshot, withWorkOf(prev))
	first := *prev.Assignments[0]
	copied := *first.Target
	first.Target = &copied // a target that changed: equal values, another object
	for _, a := range append([]*scheduling.Assignment{&first}, prev.Assignments...) {
		files, err := e.Render(a)
		require.Nil(t, err, a.Key())
		require.Equal(t, prev.Outputs.of(a.Key()).Map(), files.Map(), a.Key())
	}
	made := map[*scheduling.DeploymentTarget]bool{}
	for _, x := range e.free {
		for dt := range x.targets {
			made[dt] = true
		}
	}
	require.Equal(t, map[*scheduling.DeploymentTarget]bool{&copied: true}, made, "targets whose values the engine escaped")
}

// TestIncrementalTakesParsedConfig checks that the engine of an incremental render takes the
// parsed config values of the previous result whose text did not change, and parses the rest.
func TestIncrementalTakesParsedConfig(t *testing.T) {
	f := fleet.New(fleet.Spec{ClusterTypes: 4, Workloads: 3, TargetsPerWorkload: 2, Configs: 5, Policies: 4})
	prev := Environment(scheduling.Load(f.Inputs()))
	require.NotEmpty(t, prev.configValues)
	edit := fleet.BenchEdits()[0]
	require.NoError(t, edit.Apply(f), edit.Name)
	next, stats := Incremental(prev, scheduling.Load(f.Inputs()))
	require.False(t, stats.Full)
	taken, parsed := 0, 0
	for text, v := range next.configValues {
		was, ok := prev.configValues[text]
		if !ok {
			parsed++
			require.Equal(t, ParseConfigValue(text), v, text)
			continue
		}
		if _, structured := v.(map[string]any); structured {
			require.Equal(t, reflect.ValueOf(was).Pointer(), reflect.ValueOf(v).Pointer(), "%s: taken, not parsed again", text)
			taken++
		}
	}
	require.Positive(t, taken)
	require.Equal(t, 1, parsed, "the one value that changed")
}

// TestResultRows checks that a result, rendered whole or from another, knows where the
// assignments of each cluster type start, which the next Reschedule takes.
func TestResultRows(t *testing.T) {
	f := fleet.New(fleet.Spec{ClusterTypes: 4, Workloads: 3, TargetsPerWorkload: 2, Configs: 5, Policies: 4})
	_, err := f.AddCanary(2)
	require.NoError(t, err)
	res := Environment(scheduling.Load(f.Inputs()))
	for _, edit := range append([]fleet.Edit{{Name: "none"}}, fleet.BenchEdits()[:4]...) {
		if edit.Apply != nil {
			require.NoError(t, edit.Apply(f), edit.Name)
			res, _ = Incremental(res, scheduling.Load(f.Inputs()))
		}
		cts := res.Snapshot.ClusterTypes
		require.Len(t, res.rows, len(cts)+1, edit.Name)
		for i, ct := range cts {
			for _, a := range res.Assignments[res.rows[i]:res.rows[i+1]] {
				require.Equal(t, ct.Name, a.ClusterType.Name, edit.Name)
			}
		}
		require.Equal(t, len(res.Assignments), res.rows[len(cts)], edit.Name)
	}
}
