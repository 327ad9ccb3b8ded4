package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/internal/plural"
	"github.com/kalypso-gitops/kalypso/internal/procstat"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// benchResult is what one measurement of the synthetic fleet found.
type benchResult struct {
	ClusterTypes      int     `json:"cluster_types"`
	DeploymentTargets int     `json:"deployment_targets"`
	Configs           int     `json:"configs"`
	Policies          int     `json:"policies"`
	Assignments       int     `json:"assignments"`
	Files             int     `json:"files"`
	LoadSeconds       float64 `json:"load_seconds"`
	ScheduleSeconds   float64 `json:"schedule_seconds"`
	RenderSeconds     float64 `json:"render_seconds"`
	ApplySeconds      float64 `json:"apply_seconds"`
	FullSeconds       float64 `json:"full_seconds"`
	Allocs            uint64  `json:"allocs"`
	AllocBytes        uint64  `json:"alloc_bytes"`
	PeakRSSBytes      int64   `json:"peak_rss_bytes"`
	GOMAXPROCS        int     `json:"gomaxprocs"`
	Runs              int     `json:"runs"`
	// Incremental is each change of fleet.BenchEdits rendered from the previous result.
	Incremental []incrementalResult `json:"incremental"`
	// CacheHeapBytes is the live heap, after a collection, while the last result and its
	// snapshot are kept for the next change: what the app keeps per environment.
	CacheHeapBytes uint64 `json:"cache_heap_bytes"`
	// EndToEnd is the changes measured with the sources held in git (nil with --end-to-end=false).
	EndToEnd *endToEndResult `json:"end_to_end,omitempty"`
}

// incrementalResult is one change rendered incrementally.
type incrementalResult struct {
	Change              string  `json:"change"`
	Seconds             float64 `json:"seconds"` // render.Incremental, best of --runs; loading not included
	LoadSeconds         float64 `json:"load_seconds"`
	AssignmentsRendered int     `json:"assignments_rendered"`
	AssignmentsRemoved  int     `json:"assignments_removed"`
	Ratio               float64 `json:"ratio"` // Seconds over the full render's (schedule + render)
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	spec := fleet.DefaultSpec()
	var runs int
	var asJSON, endToEnd bool
	fs := newFlagSet("bench", "[--cluster-types N] [--workloads N] [--targets-per-workload N] [--configs N] [--policies N] [--runs N] [--end-to-end=false] [--json]",
		"Generates a synthetic control plane in memory (the sample's templates, cluster types alternating\n"+
			"between arc-flux and argocd, label-matched platform configs, policies that together assign every\n"+
			"deployment target to every cluster type), then loads, schedules and renders it and applies the result\n"+
			"to an empty GitOps tree (render.Desired, as render --out writes it). Prints the time of each step (best of --runs, by full time), the allocations\n"+
			"of that run, the peak resident memory of the process and GOMAXPROCS.\n\n"+
			"Then makes the changes a push would make, one after the other, and renders each from the previous\n"+
			"result as the app does (render.Incremental): a platform config of one cluster type, one workload,\n"+
			"a template used by every tenth cluster type, a policy that stops and then again starts selecting a\n"+
			"workload. Prints for each its time (best of --runs, loading not included), the assignments rendered\n"+
			"and the ratio to the full render (schedule + render), and the heap kept for the next change.\n\n"+
			"Then (unless --end-to-end=false) commits the fleet into go-git memory repositories, as the app holds its\n"+
			"sources, and measures a full run from git (loading every source from scratch, scheduling, rendering)\n"+
			"and each change end to end: committed, loaded through the source and parse caches of the previous\n"+
			"load as the app loads a push, scheduled and rendered from the previous result; prints each one's time\n"+
			"(best of --runs, each from the state before the change) and its ratio to the full run. The peak RSS\n"+
			"above is measured before this part.", stderr)
	fs.IntVar(&spec.ClusterTypes, "cluster-types", spec.ClusterTypes, "number of cluster types")
	fs.IntVar(&spec.Workloads, "workloads", spec.Workloads, "number of workloads, each registered from its own repository")
	fs.IntVar(&spec.TargetsPerWorkload, "targets-per-workload", spec.TargetsPerWorkload, "deployment targets of each workload")
	fs.IntVar(&spec.Configs, "configs", spec.Configs, "platform-config ConfigMaps (one environment-wide, the others matched by region, size or cluster type)")
	fs.IntVar(&spec.Policies, "policies", spec.Policies, "scheduling policies, splitting the targets by workload label and the cluster types by label")
	fs.IntVar(&runs, "runs", 3, "how many times to measure; the fastest run is reported")
	fs.BoolVar(&endToEnd, "end-to-end", true, "then measure the changes end to end, with the sources held in git as the app holds them")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object instead of text")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if err := checkBenchFlags(spec, runs); err != nil {
		fmt.Fprintf(stderr, "kalypso bench: %v\n", err)
		return 2
	}
	res, err := bench(ctx, spec, runs, endToEnd)
	if err != nil {
		fmt.Fprintf(stderr, "kalypso bench: %v\n", err)
		return 1
	}
	if asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			fmt.Fprintf(stderr, "kalypso bench: %v\n", err)
			return 1
		}
		return 0
	}
	printBench(stdout, res)
	return 0
}

func checkBenchFlags(spec fleet.Spec, runs int) error {
	for flagName, n := range map[string]int{"--cluster-types": spec.ClusterTypes, "--workloads": spec.Workloads,
		"--targets-per-workload": spec.TargetsPerWorkload, "--configs": spec.Configs, "--policies": spec.Policies} {
		if n < 0 {
			return fmt.Errorf("flag %s: %d is negative", flagName, n)
		}
	}
	if runs < 1 {
		return fmt.Errorf("flag --runs: %d is not positive", runs)
	}
	return nil
}

// bench generates the fleet once and keeps the fastest of runs measurements, then measures
// the incremental changes.
func bench(ctx context.Context, spec fleet.Spec, runs int, endToEnd bool) (benchResult, error) {
	f := fleet.New(spec)
	if _, err := f.AddCanary(10); err != nil {
		return benchResult{}, err
	}
	var best benchResult
	var last *render.Result
	for i := range runs {
		if err := ctx.Err(); err != nil {
			return best, fmt.Errorf("interrupted: %w", err)
		}
		r, res, err := benchOnce(f)
		if err != nil {
			return best, err
		}
		if i == 0 || r.FullSeconds < best.FullSeconds {
			best = r
		}
		last = res
	}
	inc, kept, err := benchIncremental(ctx, f, last, runs, best.ScheduleSeconds+best.RenderSeconds)
	if err != nil {
		return best, err
	}
	best.Incremental = inc
	best.CacheHeapBytes = liveHeap()
	runtime.KeepAlive(kept)
	best.Configs, best.Policies, best.Runs = spec.Configs, spec.Policies, runs
	best.PeakRSSBytes = procstat.PeakRSS() // of the measurements above, before the sources are put in git
	best.GOMAXPROCS = runtime.GOMAXPROCS(0)
	if endToEnd {
		last, kept = nil, nil
		if best.EndToEnd, err = benchEndToEnd(ctx, spec, runs); err != nil {
			return best, fmt.Errorf("end to end: %w", err)
		}
	}
	return best, nil
}

// benchOnce loads, schedules, renders and applies the fleet once (the tree render --out
// would write into an empty folder). The schedule time is measured on its own, after the
// full run; the render time is the rest of render.Environment.
func benchOnce(f *fleet.Fleet) (benchResult, *render.Result, error) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	snap := scheduling.Load(f.Inputs())
	loaded := time.Now()
	res := render.Environment(snap)
	rendered := time.Now()
	tree := res.Desired(render.Tree{})
	applied := time.Now()
	runtime.ReadMemStats(&after)

	if err := checkFleetResult(f, res); err != nil {
		return benchResult{}, nil, err
	}
	scheduleStart := time.Now()
	scheduling.Schedule(snap)
	schedule := time.Since(scheduleStart)
	return benchResult{
		ClusterTypes:      len(snap.ClusterTypes),
		DeploymentTargets: len(snap.Targets),
		Assignments:       len(res.Assignments),
		Files:             tree.Len(),
		LoadSeconds:       loaded.Sub(start).Seconds(),
		ScheduleSeconds:   schedule.Seconds(),
		RenderSeconds:     max(rendered.Sub(loaded)-schedule, 0).Seconds(),
		ApplySeconds:      applied.Sub(rendered).Seconds(),
		FullSeconds:       applied.Sub(start).Seconds(),
		Allocs:            after.Mallocs - before.Mallocs,
		AllocBytes:        after.TotalAlloc - before.TotalAlloc,
	}, res, nil
}

// checkFleetResult makes sure the synthetic fleet rendered every assignment without errors.
func checkFleetResult(f *fleet.Fleet, res *render.Result) error {
	if len(res.Errors) > 0 {
		return fmt.Errorf("the synthetic fleet has %d errors, the first: %w", len(res.Errors), res.Errors[0])
	}
	if res.Outputs.Len() != f.Assignments() {
		return fmt.Errorf("%d assignments rendered, want %d", res.Outputs.Len(), f.Assignments())
	}
	return nil
}

// benchIncremental makes each change of fleet.BenchEdits that the fleet allows and renders it
// from the previous result, runs times; it returns the measurements and the last result.
func benchIncremental(ctx context.Context, f *fleet.Fleet, prev *render.Result, runs int, full float64) ([]incrementalResult, *render.Result, error) {
	out := []incrementalResult{}
	for _, edit := range fleet.BenchEdits() {
		if err := ctx.Err(); err != nil {
			return out, prev, fmt.Errorf("interrupted: %w", err)
		}
		if edit.Apply(f) != nil {
			continue // this fleet is too small for the change
		}
		start := time.Now()
		snap := scheduling.Load(f.Inputs())
		r := incrementalResult{Change: edit.Name, LoadSeconds: time.Since(start).Seconds()}
		var res *render.Result
		for i := range runs {
			runtime.GC()
			start := time.Now()
			got, stats := render.Incremental(prev, snap)
			if d := time.Since(start).Seconds(); i == 0 || d < r.Seconds {
				r.Seconds = d
			}
			res, r.AssignmentsRendered, r.AssignmentsRemoved = got, stats.AssignmentsRendered, stats.AssignmentsRemoved
		}
		if full > 0 {
			r.Ratio = r.Seconds / full
		}
		out, prev = append(out, r), res
	}
	return out, prev, checkFleetResult(f, prev)
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func printBench(w io.Writer, r benchResult) {
	fmt.Fprintf(w, "fleet:        %s × %s, %s, %s\n", plural.Count(r.ClusterTypes, "cluster type"),
		plural.Count(r.DeploymentTargets, "deployment target"), plural.Count(r.Configs, "config"), plural.CountAs(r.Policies, "policy", "policies"))
	fmt.Fprintf(w, "assignments:  %d (%s)\n", r.Assignments, plural.Count(r.Files, "file"))
	fmt.Fprintf(w, "load:         %.3fs\n", r.LoadSeconds)
	fmt.Fprintf(w, "schedule:     %.3fs\n", r.ScheduleSeconds)
	fmt.Fprintf(w, "render:       %.3fs\n", r.RenderSeconds)
	fmt.Fprintf(w, "apply:        %.3fs\n", r.ApplySeconds)
	fmt.Fprintf(w, "full:         %.3fs (best of %d)\n", r.FullSeconds, r.Runs)
	fmt.Fprintf(w, "allocations:  %d (%.1f MiB)\n", r.Allocs, float64(r.AllocBytes)/(1<<20))
	fmt.Fprintf(w, "peak RSS:     %.1f MiB\n", float64(r.PeakRSSBytes)/(1<<20))
	fmt.Fprintf(w, "GOMAXPROCS:   %d\n", r.GOMAXPROCS)
	if len(r.Incremental) == 0 {
		return
	}
	fmt.Fprintf(w, "incremental (from the previous result, best of %d; ratio to the full render of %.3fs):\n", r.Runs, r.ScheduleSeconds+r.RenderSeconds)
	for _, c := range r.Incremental {
		fmt.Fprintf(w, "  %-40s %8.4fs  %6d rendered  %5d removed  %6.2f%%\n", c.Change, c.Seconds, c.AssignmentsRendered, c.AssignmentsRemoved, 100*c.Ratio)
	}
	fmt.Fprintf(w, "kept heap:    %.1f MiB (the last result and its snapshot)\n", float64(r.CacheHeapBytes)/(1<<20))
	printEndToEnd(w, r.EndToEnd, r.Runs)
}
