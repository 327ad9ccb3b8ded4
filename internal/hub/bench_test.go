package hub

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/pgtest"
	"github.com/kalypso-gitops/kalypso/internal/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// benchFleet is one environment with 100 cluster types.
func benchFleet() []Target {
	var types []string
	for i := range 100 {
		types = append(types, fmt.Sprintf("type-%03d", i))
	}
	slices.Sort(types)
	return []Target{{ControlPlane: "org/cp", Environment: "dev", GitOpsRepo: "org/gitops", GitOpsBranch: "dev", ClusterTypes: types}}
}

// benchStore opens a store of driver on disk (SQLite) or on the test PostgreSQL.
func benchStore(b *testing.B, driver string) (*store.Store, func() int64) {
	if driver == store.Postgres {
		st, err := store.Open(context.Background(), store.Options{Driver: store.Postgres, URL: pgtest.Shared(b).NewDatabase(b)})
		require.NoError(b, err)
		b.Cleanup(func() { st.Close() })
		return st, func() int64 { return -1 }
	}
	dir := b.TempDir()
	st, err := store.Open(context.Background(), store.Options{Path: filepath.Join(dir, "hub.db")})
	require.NoError(b, err)
	b.Cleanup(func() { st.Close() })
	return st, func() int64 { return dirSize(dir) }
}

func dirSize(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
	}
	return n
}

// cpuTime is the CPU time the process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's peak resident memory, in bytes.
func peakRSS() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss << 10
}

// benchClients is how many clients post reports at once (each cluster is a client of its own).
const benchClients = 256

// BenchmarkReports100k posts 100,000 signed Flux reports, one per cluster of 100 cluster
// types in one environment, through the HTTP endpoint (256 clients on keep-alive
// connections); each answer comes after its group commit. Run with:
// go test -run '^$' -bench Reports100k -benchtime 1x ./internal/hub
func BenchmarkReports100k(b *testing.B) {
	for _, driver := range []string{store.SQLite, store.Postgres} {
		b.Run(driver, func(b *testing.B) {
			for range b.N {
				benchReports(b, driver, benchReportCount())
			}
		})
	}
}

func benchReports(b *testing.B, driver string, n int) {
	b.StopTimer()
	st, size := benchStore(b, driver)
	now := time.Now()
	targets := benchFleet()
	h := New(Options{Store: st, Keys: keysFor, Now: time.Now, Logger: zerolog.Nop(), Writers: WritersFor(driver),
		Limits:    Limits{MaxAge: time.Hour, ClockSkew: time.Minute, MaxBodyBytes: 256 << 10, MaxConcurrent: 512, MaxClusters: n},
		Directory: NewDirectory(func(context.Context) ([]Target, error) { return targets, nil }, time.Hour, time.Minute, time.Now)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	bodies := make([][]byte, n)
	sigs := make([]string, n)
	ts := now.UTC().Format(time.RFC3339)
	for i := range n {
		bodies[i] = fluxBody(fmt.Sprintf("cluster-%06d", i), targets[0].ClusterTypes[i%100], "dev", sampleSHA, "info", ts)
		sigs[i] = Sign([]byte(devSecret), bodies[i])
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients, MaxConnsPerHost: benchClients}}
	work := make(chan int, 1024)
	var failures sync.Map
	var wg sync.WaitGroup
	b.StartTimer()
	start, cpu := time.Now(), cpuTime()
	for range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+ReportsPath, bytes.NewReader(bodies[i]))
				req.Header.Set(HeaderSignature, sigs[i])
				resp, err := client.Do(req)
				if err != nil || resp.StatusCode != http.StatusAccepted {
					failures.Store(i, fmt.Sprint(err, resp))
				}
				if resp != nil {
					_, _ = io.Copy(io.Discard, resp.Body) // read to the end, so the connection is reused
					resp.Body.Close()
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	failures.Range(func(k, v any) bool { b.Fatalf("report %v: %v", k, v); return false })
	count, err := st.CountReports(context.Background())
	require.NoError(b, err)
	require.EqualValues(b, n, count)
	b.ReportMetric(float64(n)/elapsed.Seconds(), "reports/s")
	b.ReportMetric(float64(n)/(cpuTime()-cpu).Seconds(), "reports/cpu-s")
	b.ReportMetric(elapsed.Seconds(), "s/100k")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
	if sz := size(); sz >= 0 {
		b.ReportMetric(float64(sz)/(1<<20)*1e6/float64(n), "store-MiB/1M-reports")
	}
}

// BenchmarkQueries measures the hub's answers on an environment of 100,000 clusters and
// 1,000,000 stored reports (ten per cluster), on SQLite: the p50 and p99 of 200 runs of each
// query, and its first run (the aggregates are computed then, and kept for up to 10 s).
// Run with: go test -run '^$' -bench Queries -benchtime 1x ./internal/hub
func BenchmarkQueries(b *testing.B) {
	const clusters, perCluster = 100000, 10
	st, size := benchStore(b, store.SQLite)
	now := time.Now().UTC()
	targets := benchFleet()
	seedHistory(b, st, targets[0], clusters, perCluster, now)
	storeMiB := float64(size()) / (1 << 20)
	h := New(Options{Store: st, Keys: keysFor, Now: time.Now, Logger: zerolog.Nop(),
		Directory: NewDirectory(func(context.Context) ([]Target, error) { return targets, nil }, time.Hour, time.Minute, time.Now),
		Desired: func(Target) (Desired, bool) {
			var d Desired
			for _, ct := range targets[0].ClusterTypes {
				d.Assignments = append(d.Assignments, Assignment{Key: ct + "/app", ClusterType: ct, Workload: "app"})
			}
			return d, true
		},
		Head: func(context.Context, Target) (string, time.Time, error) { return shaNew, now.Add(-time.Hour), nil }})
	ctx := context.Background()
	queries := map[string]func() error{
		"clusters-page":   func() error { _, err := h.Clusters(ctx, "org/cp", "dev", "", "cluster-050000", 100); return err },
		"cluster-detail":  func() error { _, err := h.Cluster(ctx, "org/cp", "dev", "cluster-077777"); return err },
		"drift":           func() error { _, err := h.Drift(ctx, "org/cp", "dev"); return err },
		"environments":    func() error { _, err := h.Environments(ctx, func(string) bool { return true }); return err },
		"workloads":       func() error { _, err := h.Workloads(ctx, "org/cp"); return err },
		"history":         func() error { _, err := h.History(ctx, "org/cp", "dev", ""); return err },
		"dora":            func() error { _, err := h.DORA(ctx, "org/cp", "dev", 30); return err },
		"clusters-filter": func() error { _, err := h.Clusters(ctx, "org/cp", "dev", "type-042", "", 100); return err },
	}
	b.ResetTimer()
	for range b.N {
		for _, name := range slices.Sorted(maps.Keys(queries)) {
			var took []time.Duration
			for range 200 {
				start := time.Now()
				require.NoError(b, queries[name]())
				took = append(took, time.Since(start))
			}
			first := took[0]
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, name+"-p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, name+"-p99-ms")
			b.ReportMetric(float64(first.Microseconds())/1000, name+"-first-ms")
		}
	}
	b.ReportMetric(storeMiB, "store-MiB")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
}

// seedHistory stores perCluster reports of each cluster (the last on shaNew for nine in
// ten clusters, so one in ten is behind) and a year of daily deployments.
func seedHistory(b *testing.B, st *store.Store, t Target, clusters, perCluster int, now time.Time) {
	ctx := context.Background()
	batch := make([]store.Report, 0, 5000)
	flush := func() {
		_, err := st.Ingest(ctx, batch, store.IngestOptions{})
		require.NoError(b, err)
		batch = batch[:0]
	}
	for r := range perCluster {
		for c := range clusters {
			sha := shaOld
			if r == perCluster-1 && c%10 != 0 {
				sha = shaNew
			}
			batch = append(batch, store.Report{ControlPlane: t.ControlPlane, Environment: t.Environment, ClusterType: t.ClusterTypes[c%100],
				Cluster: fmt.Sprintf("cluster-%06d", c), Object: "Kustomization/flux-system/gitops", Source: SourceFlux, GitOpsCommit: sha,
				State: store.StateSuccess, Reason: "ReconciliationSucceeded", Message: "Reconciliation finished in 1.2s, next run in 10m0s",
				EventAt: now.Add(time.Duration(r-perCluster) * time.Minute), ReceivedAt: now})
			if len(batch) == cap(batch) {
				flush()
			}
		}
	}
	flush()
	for d := range 365 {
		at := now.AddDate(0, 0, -d)
		id, err := st.StartDeployment(ctx, store.Deployment{ControlPlane: t.ControlPlane, Environment: t.Environment, MainCommit: fmt.Sprintf("m%d", d),
			GitOpsCommit: fmt.Sprintf("g%d", d), CommittedAt: at.Add(-time.Hour), StartedAt: at})
		require.NoError(b, err)
		require.NoError(b, st.FinishDeployment(ctx, id, []string{"success", "success", "failure"}[d%3], "", at.Add(10*time.Minute)))
	}
}

// benchReportCount is 100,000, or KALYPSO_BENCH_REPORTS when set (for profiling).
func benchReportCount() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("KALYPSO_BENCH_REPORTS"), &n); err == nil && n > 0 {
		return n
	}
	return 100000
}
