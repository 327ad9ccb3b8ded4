package render_test

import (
	"runtime"
	"testing"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// BenchmarkLoadWithCache loads the control plane of 1,000 cluster types × 100 deployment
// targets (100,000 assignments) after a one-file change of its environment branch, from
// scratch and with the parse cache of the previous load, and reports the heap the cache keeps.
// The environment branch and main have content addresses (the workload repositories, 100
// files, are parsed each time); the addresses are hashed in each load, as a git tree's are not.
func BenchmarkLoadWithCache(b *testing.B) {
	f := fleet.New(fleet.Spec{ClusterTypes: 1000, Workloads: 100, TargetsPerWorkload: 1, Configs: 5, Policies: 4})
	in := func() scheduling.Inputs {
		in := f.Inputs()
		in.Env.FS, in.Main.FS = hashedFS{f.Env}, hashedFS{f.Main}
		return in
	}
	file := f.ClusterTypeFile(0)
	original := f.Env[file].Data
	edit := func(i int) { // one file changed at each load
		if i%2 == 0 {
			f.Env[file].Data = append([]byte("# edited\n"), original...)
		} else {
			f.Env[file].Data = original
		}
	}
	b.Run("scratch", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			edit(i)
			scheduling.Load(in())
		}
	})
	b.Run("cached", func(b *testing.B) {
		cache := scheduling.NewParseCache()
		scheduling.Load(with(in(), cache))
		for i := 0; b.Loop(); i++ {
			edit(i)
			scheduling.Load(with(in(), cache))
		}
		b.ReportMetric(float64(cache.Len()), "files-cached")
		b.ReportMetric(float64(cache.Misses()), "files-parsed")
	})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cache := scheduling.NewParseCache()
	scheduling.Load(with(in(), cache))
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.Logf("the cache of %d files keeps %.1f MiB of heap", cache.Len(), float64(after.HeapAlloc-before.HeapAlloc)/(1<<20))
	runtime.KeepAlive(cache)
}

func with(in scheduling.Inputs, cache *scheduling.ParseCache) scheduling.Inputs {
	in.Cache = cache
	return in
}
