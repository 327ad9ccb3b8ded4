package render_test

import (
	"fmt"
	"testing"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// BenchmarkIncrementalBySize renders the same change, one workload edited (its 10 targets on
// 100 cluster types: 1,000 assignments), from the full result of environments of 10,000,
// 100,000 and 300,000 assignments: what the change costs beyond its own assignments is what
// grows with the environment.
func BenchmarkIncrementalBySize(b *testing.B) {
	for _, workloads := range []int{10, 100, 300} {
		spec := fleet.DefaultSpec()
		spec.Workloads = workloads
		f := fleet.New(spec)
		prev := render.Environment(scheduling.Load(f.Inputs()))
		if err := fleet.BenchEdits()[1].Apply(f); err != nil {
			b.Fatal(err)
		}
		next := scheduling.Load(f.Inputs())
		b.Run(fmt.Sprintf("assignments=%d", f.Assignments()), func(b *testing.B) {
			for b.Loop() {
				if _, stats := render.Incremental(prev, next); stats.AssignmentsRendered != 1000 {
					b.Fatalf("%+v", stats)
				}
			}
		})
	}
}
