package fleetgit

import (
	"runtime"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/procstat"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// BenchmarkLoadFromGit loads the sources of 3,000 cluster types × 100 deployment targets
// (300,000 assignments) held in git after a one-file commit to the environment branch: from
// scratch, and through the source and parse caches of the previous load, as the app loads.
func BenchmarkLoadFromGit(b *testing.B) {
	f := fleet.New(fleet.Spec{ClusterTypes: 3000, Workloads: 100, TargetsPerWorkload: 1, Configs: 5, Policies: 4})
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
	var cpu time.Duration // the process's CPU time in loads
	load := func(cache *gitsource.Cache, parses *scheduling.ParseCache) {
		start := procstat.CPU()
		defer func() { cpu += procstat.CPU() - start }()
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
	measure := func(b *testing.B, cache *gitsource.Cache, parses *scheduling.ParseCache) {
		cpu = 0
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			edit(i)
			b.StartTimer()
			load(cache, parses)
		}
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	}
	b.Run("scratch", func(b *testing.B) { measure(b, nil, nil) })
	b.Run("cached", func(b *testing.B) {
		cache, parses := gitsource.NewCache(), scheduling.NewParseCache()
		load(cache, parses)
		measure(b, cache, parses)
		b.ReportMetric(float64(parses.Misses()), "files-parsed")
	})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cache := gitsource.NewCache()
	load(cache, nil)
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.Logf("the source cache of %d files keeps %.1f MiB of heap", r.Files(), float64(after.HeapAlloc-before.HeapAlloc)/(1<<20))
	runtime.KeepAlive(cache)
}
