package scheduling_test

import (
	"testing"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// BenchmarkLoad reads the 100 × 1,000 fleet's control plane and workloads.
func BenchmarkLoad(b *testing.B) {
	in := fleet.Generate(fleet.DefaultSpec())
	b.ReportAllocs()
	for b.Loop() {
		snap := scheduling.Load(in)
		if len(snap.Errors) > 0 {
			b.Fatal(snap.Errors[0])
		}
	}
}

// BenchmarkSchedule computes the 100,000 assignments of the 100 × 1,000 fleet.
func BenchmarkSchedule(b *testing.B) {
	f := fleet.New(fleet.DefaultSpec())
	snap := scheduling.Load(f.Inputs())
	b.ReportAllocs()
	for b.Loop() {
		if n := len(scheduling.Schedule(snap)); n != f.Assignments() {
			b.Fatalf("%d assignments, want %d", n, f.Assignments())
		}
	}
}
