package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/hub"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// BenchmarkE2EHubSteadyReports holds 1,000 signed Flux reports a second for a minute
// (1,000 clusters reporting every second) against the real binary on SQLite, and times the
// webhook endpoint meanwhile, against the same webhooks without reports.
// Run with: go test -run '^$' -bench E2EHubSteadyReports -benchtime 1x -timeout 20m ./e2e
func BenchmarkE2EHubSteadyReports(b *testing.B) {
	w := newWorld(b)
	w.start("KALYPSO_REPORTS_SECRET="+reportSecret, "KALYPSO_STORE_PATH="+filepath.Join(b.TempDir(), "hub.db"))
	head := w.head("dev")
	require.NoError(b, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, head, "success", "ci/probe", "probe"))
	w.settle()
	var probe []byte
	var probeHeader http.Header
	for _, d := range w.sim.Deliveries() {
		if d.Event == "status" {
			probe, probeHeader = d.Body, d.Header
		}
	}
	require.NotNil(b, probe, "a status delivery to time")
	n := 0
	webhook := func() time.Duration {
		n++
		req, _ := http.NewRequest(http.MethodPost, "http://"+w.addr+"/api/github/hook", bytes.NewReader(probe))
		req.Header = probeHeader.Clone()
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("bench-probe-%d-%d", time.Now().UnixNano(), n))
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		took := time.Since(start)
		require.NoError(b, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Less(b, resp.StatusCode, 300)
		return took
	}
	timeFor := func(d time.Duration) []time.Duration {
		var out []time.Duration
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			out = append(out, webhook())
		}
		slices.Sort(out)
		return out
	}
	b.ResetTimer()
	for range b.N {
		quiet := timeFor(10 * time.Second)
		var accepted, refused atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); w.steadyReports(head, 1000, stop, &accepted, &refused) }()
		start := time.Now()
		loaded := timeFor(time.Minute)
		close(stop)
		wg.Wait()
		elapsed := time.Since(start)
		p := func(list []time.Duration, q float64) float64 {
			return float64(list[int(float64(len(list)-1)*q)].Microseconds()) / 1000
		}
		b.ReportMetric(float64(accepted.Load())/elapsed.Seconds(), "reports/s")
		b.ReportMetric(float64(refused.Load()), "refused")
		b.ReportMetric(p(quiet, 0.5), "webhook-quiet-p50-ms")
		b.ReportMetric(p(quiet, 0.99), "webhook-quiet-p99-ms")
		b.ReportMetric(p(loaded, 0.5), "webhook-loaded-p50-ms")
		b.ReportMetric(p(loaded, 0.99), "webhook-loaded-p99-ms")
	}
}

// steadyReports sends rate reports a second (what is due at each 10 ms tick), from rate
// clusters in turn, until stop is closed.
func (w *world) steadyReports(sha string, rate int, stop <-chan struct{}, accepted, refused *atomic.Int64) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	work := make(chan int, rate)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				body := fluxEvent(fmt.Sprintf("steady-%04d", i%rate), devClusterTypes[i%len(devClusterTypes)], sha, false, time.Now())
				body = bytes.Replace(body, []byte("1.482733s"), []byte(fmt.Sprintf("1.%09ds", i)), 1) // every body differs
				req, _ := http.NewRequest(http.MethodPost, "http://"+w.addr+hub.ReportsPath, bytes.NewReader(body))
				req.Header.Set(hub.HeaderSignature, hub.Sign([]byte(reportSecret), body))
				resp, err := client.Do(req)
				if err == nil && resp.StatusCode == http.StatusAccepted {
					accepted.Add(1)
				} else {
					refused.Add(1)
				}
				if resp != nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}()
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	for next := 0; ; {
		select {
		case <-stop:
			close(work)
			wg.Wait()
			return
		case <-tick.C:
			for due := int(time.Since(start).Seconds()*float64(rate)) - next; due > 0; due-- {
				select {
				case work <- next:
					next++
				default: // the app is behind by a second of reports: they are not sent
					due = 0
				}
			}
		}
	}
}
