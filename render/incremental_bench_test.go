package render_test

import (
	"testing"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// BenchmarkIncremental measures each of fleet.BenchEdits on the 100 × 1,000 fleet (100,000
// assignments), from the result of the edits before it; loading is not measured.
func BenchmarkIncremental(b *testing.B) {
	f := fleet.New(fleet.DefaultSpec())
	if _, err := f.AddCanary(10); err != nil {
		b.Fatal(err)
	}
	prev := render.Environment(scheduling.Load(f.Inputs()))
	for _, edit := range fleet.BenchEdits() {
		if err := edit.Apply(f); err != nil {
			b.Fatal(err)
		}
		next := scheduling.Load(f.Inputs())
		res, stats := render.Incremental(prev, next)
		if stats.Full || len(res.Errors) > 0 {
			b.Fatalf("%s: %+v, %d errors", edit.Name, stats, len(res.Errors))
		}
		b.Run(edit.Name, func(b *testing.B) {
			for b.Loop() {
				render.Incremental(prev, next)
			}
			b.ReportMetric(float64(stats.AssignmentsRendered), "rendered")
		})
		prev = res
	}
}
