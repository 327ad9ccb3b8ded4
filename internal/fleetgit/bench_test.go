package fleetgit

import (
	"testing"
	"testing/fstest"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// BenchmarkLoadFromGit loads the sources of 1,000 cluster types × 100 deployment targets
// (100,000 assignments) held in git after a one-file commit to the environment branch: from
// scratch, and through the source and parse caches of the previous load, as the app loads.
func BenchmarkLoadFromGit(b *testing.B) {
	f := fleet.New(fleet.Spec{ClusterTypes: 1000, Workloads: 100, TargetsPerWorkload: 1, Configs: 5, Policies: 4})
	r, err := New(f)
	if err != nil {
		b.Fatal(err)
	}
	file := f.ClusterTypeFile(0)
	original := f.Env[file].Data
	edit := func(i int) {
		data := original
		if i%2 == 0 {
			data = append([]byte("# edited\n"), original...)
		}
		f.Env[file] = &fstest.MapFile{Data: data}
		if err := r.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	load := func(cache *gitsource.Cache, parses *scheduling.ParseCache) {
		in, _, err := r.Inputs(cache, scheduling.Policy{})
		if err != nil {
			b.Fatal(err)
		}
		in.Cache = parses
		snap := scheduling.Load(in)
		if len(snap.Errors) > 0 {
			b.Fatal(snap.Errors[0])
		}
		cache.Sweep()
	}
	b.Run("scratch", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			edit(i)
			b.StartTimer()
			load(nil, nil)
		}
	})
	b.Run("cached", func(b *testing.B) {
		cache, parses := gitsource.NewCache(), scheduling.NewParseCache()
		load(cache, parses)
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			edit(i)
			b.StartTimer()
			load(cache, parses)
		}
	})
}
