package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"runtime"
	"testing/fstest"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/internal/fleetgit"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/procstat"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// endToEndResult is the changes measured end to end: the fleet's sources held as the app holds
// them (git trees in go-git memory storage), loaded through the app's loading path.
type endToEndResult struct {
	// FullSeconds is a full run from git: loading every source from scratch, scheduling and
	// rendering (best of --runs); FullLoadSeconds is its loading part.
	FullSeconds     float64 `json:"full_seconds"`
	FullLoadSeconds float64 `json:"full_load_seconds"`
	// FullCPUSeconds is the least CPU time (every thread) a full run from git took: on a busy
	// machine, a measure less disturbed than wall time.
	FullCPUSeconds float64 `json:"full_cpu_seconds"`
	// Changes are fleet.BenchEdits, each committed, then loaded incrementally (through the
	// environment's source and parse caches of the previous load), scheduled and rendered from
	// the previous result.
	Changes []endToEndChange `json:"changes"`
}

// endToEndChange is one change measured end to end.
type endToEndChange struct {
	Change        string  `json:"change"`
	Seconds       float64 `json:"seconds"` // load + schedule + render, best of --runs
	LoadSeconds   float64 `json:"load_seconds"`
	RenderSeconds float64 `json:"render_seconds"` // render.Incremental: schedule and render
	Ratio         float64 `json:"ratio"`          // Seconds over the full run's
	CPUSeconds    float64 `json:"cpu_seconds"`    // the least CPU time (every thread) of --runs
	CPURatio      float64 `json:"cpu_ratio"`      // CPUSeconds over the full run's
}

// pushRun is what the app keeps of an environment between pushes: its source and parse caches
// and its last result.
type pushRun struct {
	repos  *fleetgit.Repos
	trees  *gitsource.Cache
	parses *scheduling.ParseCache
	prev   *render.Result
}

// load loads the environment's sources from git through the run's caches (nil: from scratch).
func (g *pushRun) load(cached bool) (*scheduling.Snapshot, error) {
	var trees *gitsource.Cache
	var parses *scheduling.ParseCache
	if cached {
		trees, parses = g.trees, g.parses
		defer trees.Sweep()
	}
	in, errs, err := g.repos.Inputs(trees, scheduling.Policy{})
	if err != nil {
		return nil, err
	}
	in.Cache = parses
	snap := scheduling.Load(in)
	if len(errs) > 0 || len(snap.Errors) > 0 {
		return nil, fmt.Errorf("the synthetic fleet in git has errors: %v %v", errs, snap.Errors)
	}
	return snap, nil
}

// benchEndToEnd generates the fleet again, commits it into memory repositories, measures a full
// run from git, then each change of fleet.BenchEdits end to end.
func benchEndToEnd(ctx context.Context, spec fleet.Spec, runs int) (*endToEndResult, error) {
	f := fleet.New(spec)
	if _, err := f.AddCanary(10); err != nil {
		return nil, err
	}
	repos, err := fleetgit.New(f)
	if err != nil {
		return nil, err
	}
	g := &pushRun{repos: repos, trees: gitsource.NewCache(), parses: scheduling.NewParseCache()}
	out := &endToEndResult{Changes: []endToEndChange{}}
	for i := range runs {
		g.prev = nil // the previous run's result is garbage before this one renders
		runtime.GC()
		start, cpu := time.Now(), procstat.CPU()
		snap, err := g.load(false)
		if err != nil {
			return nil, err
		}
		loaded := time.Now()
		g.prev = render.Environment(snap)
		if d := time.Since(start).Seconds(); i == 0 || d < out.FullSeconds {
			out.FullSeconds, out.FullLoadSeconds = d, loaded.Sub(start).Seconds()
		}
		if c := (procstat.CPU() - cpu).Seconds(); i == 0 || c < out.FullCPUSeconds {
			out.FullCPUSeconds = c
		}
		if err := checkFleetResult(f, g.prev); err != nil {
			return nil, err
		}
	}
	// The state the first change starts from, as the app holds it: the caches filled by a load
	// through them, and the result of that load (whose objects the next loads share).
	snap, err := g.load(true)
	if err != nil {
		return nil, err
	}
	if g.prev, _ = render.Incremental(g.prev, snap); g.prev.Snapshot != snap {
		return nil, fmt.Errorf("the result of the cached load is not its own")
	}
	for _, edit := range fleet.BenchEdits() {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("interrupted: %w", err)
		}
		c, ok, err := g.change(f, edit, runs)
		if err != nil {
			return out, err
		}
		if ok {
			c.Ratio, c.CPURatio = c.Seconds/out.FullSeconds, c.CPUSeconds/max(out.FullCPUSeconds, 1e-9)
			out.Changes = append(out.Changes, c)
		}
	}
	return out, checkFleetResult(f, g.prev)
}

// fleetFiles is the state of a fleet's files (its maps, whose files edits replace, never change).
type fleetFiles struct{ env, main, workloads fstest.MapFS }

// change measures one edit end to end, runs times, each from the state before the edit with
// the caches of that state; it reports false when the fleet is too small for the edit.
func (g *pushRun) change(f *fleet.Fleet, edit fleet.Edit, runs int) (endToEndChange, bool, error) {
	c := endToEndChange{Change: edit.Name}
	before := filesOf(f)
	if edit.Apply(f) != nil {
		return c, false, nil
	}
	after := filesOf(f)
	var res *render.Result
	for i := range runs {
		if i > 0 { // back to the state before the edit, its caches loaded
			before.restore(f)
			if err := g.repos.Sync(); err != nil {
				return c, false, err
			}
			if _, err := g.load(true); err != nil {
				return c, false, err
			}
			after.restore(f)
		}
		if err := g.repos.Sync(); err != nil { // the push
			return c, false, err
		}
		runtime.GC()
		start, cpu := time.Now(), procstat.CPU()
		snap, err := g.load(true)
		if err != nil {
			return c, false, err
		}
		loaded := time.Now()
		got, _ := render.Incremental(g.prev, snap)
		if d := time.Since(start).Seconds(); i == 0 || d < c.Seconds {
			c.Seconds, c.LoadSeconds, c.RenderSeconds = d, loaded.Sub(start).Seconds(), time.Since(loaded).Seconds()
		}
		if used := (procstat.CPU() - cpu).Seconds(); i == 0 || used < c.CPUSeconds {
			c.CPUSeconds = used
		}
		res = got
	}
	g.prev = res
	return c, true, nil
}

// printEndToEnd prints the changes measured end to end.
func printEndToEnd(w io.Writer, r *endToEndResult, runs int) {
	if r == nil {
		return
	}
	fmt.Fprintf(w, "end to end (sources in go-git memory storage, loaded through the app's caches, scheduled and rendered\n"+
		"  from the previous result, best of %d; ratio to the full run from git of %.3fs, of which load %.3fs;\n"+
		"  CPU time, least of %d, and its ratio to the full run's %.3fs):\n", runs, r.FullSeconds, r.FullLoadSeconds, runs, r.FullCPUSeconds)
	for _, c := range r.Changes {
		fmt.Fprintf(w, "  %-40s %8.4fs  load %.4fs  render %.4fs  %6.2f%%   cpu %.4fs %6.2f%%\n",
			c.Change, c.Seconds, c.LoadSeconds, c.RenderSeconds, 100*c.Ratio, c.CPUSeconds, 100*c.CPURatio)
	}
}

// filesOf is the current state of f's files.
func filesOf(f *fleet.Fleet) fleetFiles {
	return fleetFiles{env: maps.Clone(f.Env), main: maps.Clone(f.Main), workloads: maps.Clone(f.Workloads)}
}

// restore puts f's files back to s.
func (s fleetFiles) restore(f *fleet.Fleet) {
	f.Env, f.Main, f.Workloads = maps.Clone(s.env), maps.Clone(s.main), maps.Clone(s.workloads)
}
