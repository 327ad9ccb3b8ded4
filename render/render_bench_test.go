package render_test

import (
	"fmt"
	"testing"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// BenchmarkEnvironment schedules and renders whole fleets; the snapshot is loaded once,
// outside the measurement, so -benchtime=1x measures exactly one environment.
func BenchmarkEnvironment(b *testing.B) {
	for _, clusterTypes := range []int{10, 100} {
		spec := fleet.DefaultSpec()
		spec.ClusterTypes = clusterTypes
		b.Run(fmt.Sprintf("%dx1000", clusterTypes), func(b *testing.B) {
			f := fleet.New(spec)
			benchmarkEnvironment(b, f, scheduling.Load(f.Inputs()))
		})
	}
}

// benchmarkEnvironment renders a loaded fleet's environment b.N times.
func benchmarkEnvironment(b *testing.B, f *fleet.Fleet, snap *scheduling.Snapshot) {
	b.ReportAllocs()
	for b.Loop() {
		res := render.Environment(snap)
		if len(res.Errors) > 0 || res.Outputs.Len() != f.Assignments() {
			b.Fatalf("%d outputs, %d errors", res.Outputs.Len(), len(res.Errors))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*f.Assignments()), "ns/assignment")
}

// BenchmarkRenderOne renders one assignment of each reconciler template.
func BenchmarkRenderOne(b *testing.B) {
	snap := scheduling.Load(fleet.Generate(fleet.Spec{ClusterTypes: 2, Workloads: 1, TargetsPerWorkload: 1, Configs: 5, Policies: 4}))
	engine := render.NewEngine(snap)
	for _, a := range scheduling.Schedule(snap) {
		b.Run(a.ClusterType.Spec.Reconciler, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := engine.Render(a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEnvironmentCheckedValues renders a fleet of 10 cluster types whose every deployment
// target has a value checked for placement (a path with a space, different for each target):
// the price of the check, against BenchmarkEnvironment/10x1000.
func BenchmarkEnvironmentCheckedValues(b *testing.B) {
	spec := fleet.DefaultSpec()
	spec.ClusterTypes = 10
	f := fleet.New(spec)
	snap := scheduling.Load(f.Inputs())
	for i, t := range snap.Targets {
		t.Manifests["path"] = fmt.Sprintf("./charts/app %d", i)
	}
	benchmarkEnvironment(b, f, snap)
}
