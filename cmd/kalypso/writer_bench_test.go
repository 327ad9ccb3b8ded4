package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// BenchmarkRenderOutWriter writes the GitOps tree of the bench fleet with 10 and with 100
// cluster types (10,000 and 100,000 assignments, 30,011 and 300,101 files) into a fresh folder
// with render --out's writer and with a minimal Go writer (os.MkdirAll once per folder,
// os.WriteFile per file, paths sorted beforehand), in alternating order, and reports the best
// time of each and their ratio (target ≤ 1.2).
func BenchmarkRenderOutWriter(b *testing.B) {
	for _, clusterTypes := range []int{10, 100} {
		spec := fleet.DefaultSpec()
		spec.ClusterTypes = clusterTypes
		b.Run(fmt.Sprintf("%dx1000", clusterTypes), func(b *testing.B) { benchWriters(b, spec) })
	}
}

// benchWriters measures both writers on the fleet of spec.
func benchWriters(b *testing.B, spec fleet.Spec) {
	f := fleet.New(spec)
	res := render.Environment(scheduling.Load(f.Inputs()))
	desired := res.Desired(render.Tree{})
	tree := res.Apply(render.Tree{})
	paths := tree.SortedPaths()
	base := b.TempDir()
	var best [2]time.Duration
	writers := [2]func(dir string) error{
		func(dir string) error { _, _, err := writeTree(dir, render.Tree{}, desired, io.Discard); return err },
		func(dir string) error { return minimalWrite(dir, paths, tree) },
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range 2 {
			w := (i + j) % 2 // alternate which writer goes first
			dir := filepath.Join(base, "out")
			start := time.Now()
			if err := writers[w](dir); err != nil {
				b.Fatal(err)
			}
			if d := time.Since(start); best[w] == 0 || d < best[w] {
				best[w] = d
			}
			b.StopTimer()
			if err := os.RemoveAll(dir); err != nil {
				b.Fatal(err)
			}
			syscall.Sync()
			b.StartTimer()
		}
	}
	b.ReportMetric(best[0].Seconds(), "kalypso-s")
	b.ReportMetric(best[1].Seconds(), "minimal-s")
	b.ReportMetric(best[0].Seconds()/best[1].Seconds(), "ratio")
}

// minimalWrite is the floor render --out is measured against: each folder made once with
// os.MkdirAll, each file written with os.WriteFile.
func minimalWrite(dir string, paths []string, tree render.Tree) error {
	made := map[string]bool{}
	for _, p := range paths {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if d := filepath.Dir(full); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			made[d] = true
		}
		if err := os.WriteFile(full, tree[p], 0o644); err != nil {
			return err
		}
	}
	return nil
}
