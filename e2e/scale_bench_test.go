package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// fleetSizes are the GitOps repositories the scale benchmarks run on: n cluster types of the
// fleet (plus the sample's large) × 101 deployment targets. A one-file change of the large
// cluster type's platform config changes 101 assignments whatever the size.
var fleetSizes = []struct {
	name         string
	clusterTypes int
}{{"1k", 9}, {"10k", 99}, {"100k", 999}, {"300k", 2999}}

// BenchmarkE2EOneFileChange measures, on GitOps repositories of 1,010, 10,100, 101,000 and
// 303,000 assignments, a one-file push to the control plane (the platform config of one cluster
// type: 101 assignments change) until the app has updated its pull request: webhook, fetch,
// incremental loading and rendering, the changed trees, the push of the new objects and the
// pull request. Besides the wall time per change (the GitHub simulator included), it reports
// the app's own cost per change: app-ms, the reconcile's wall time less its waits for GitHub
// (the app's phase log: total_ms − github_ms), and cpu-ms, the CPU time of the app's process
// (/proc/<pid>/stat, every thread, the whole change: webhook, reconcile and check run).
// Run one size with: go test -run '^$' -bench 'OneFileChange/10k$' -benchtime 20x ./e2e
func BenchmarkE2EOneFileChange(b *testing.B) {
	for _, size := range fleetSizes {
		b.Run(size.name, func(b *testing.B) {
			w := newWorld(b)
			w.patience = 15 * time.Minute // the first proposal of 300,000 assignments takes minutes
			clusterTypes, targets := fleetOf(w, size.clusterTypes, 100)
			w.start("KALYPSO_LOG_LEVEL=debug")
			w.settle()
			b.ReportMetric(float64(clusterTypes*targets), "assignments")
			change := func(i int) {
				cfg := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: large-config\n  labels:\n     platform-config: \"true\"\n     cluster-type: large\ndata:\n  CLUSTER_NAME: Large %d\n", i)
				before := w.head("kalypso/dev")
				w.commit(sample.ControlPlane, "dev", map[string]*string{"cluster-types/west-us/large/large-config.yaml": str(cfg)})
				require.NotEqual(b, before, w.head("kalypso/dev"), "the pull request was updated")
			}
			change(-1) // the first change after the full proposal
			var app, github time.Duration
			cpu0, logs0 := processCPU(b, w.pid()), len(w.logs.String())
			b.ResetTimer()
			for i := range b.N {
				change(i)
			}
			b.StopTimer()
			cpu := processCPU(b, w.pid()) - cpu0
			phases := reconcilePhases(b, w.logs.String()[logs0:])
			for _, p := range phases {
				app += p.app()
				github += p.github()
			}
			b.Logf("mean of %d reconciles (ms): %s", len(phases), meanPhases(phases))
			n := float64(b.N)
			b.ReportMetric(float64(app.Microseconds())/1000/n, "app-ms/change")
			b.ReportMetric(float64(github.Microseconds())/1000/n, "github-ms/change")
			b.ReportMetric(float64(cpu.Microseconds())/1000/n, "cpu-ms/change")
		})
	}
}

// phaseLog is one "reconcile phases" line of the app's log.
type phaseLog map[string]any

func (p phaseLog) ms(key string) time.Duration {
	v, _ := p[key].(float64)
	return time.Duration(v * float64(time.Millisecond))
}

func (p phaseLog) app() time.Duration    { return p.ms("app_ms") }
func (p phaseLog) github() time.Duration { return p.ms("github_ms") }

// meanPhases is the mean of every step of the phase logs, in the order of the first.
func meanPhases(logs []phaseLog) string {
	var keys []string
	for k := range logs[0] {
		if strings.HasSuffix(k, "_ms") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		var sum time.Duration
		for _, p := range logs {
			sum += p.ms(k)
		}
		out = append(out, fmt.Sprintf("%s %.1f", strings.TrimSuffix(k, "_ms"), float64(sum.Microseconds())/1000/float64(len(logs))))
	}
	return strings.Join(out, ", ")
}

// reconcilePhases returns the phase logs of the reconciles in logs (JSON lines).
func reconcilePhases(t testing.TB, logs string) []phaseLog {
	t.Helper()
	var out []phaseLog
	for _, line := range strings.Split(logs, "\n") {
		if !strings.Contains(line, `"reconcile phases"`) {
			continue
		}
		var p phaseLog
		require.NoError(t, json.Unmarshal([]byte(line), &p), line)
		out = append(out, p)
	}
	require.NotEmpty(t, out, "the app logs its reconcile phases at debug level")
	return out
}

// processCPU is the CPU time, user and system, a process has used (/proc/<pid>/stat, in
// clock ticks of 10 ms).
func processCPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	// The command name, in parentheses, may hold spaces: count fields after its end.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	utime, err := strconv.ParseInt(fields[11], 10, 64)
	require.NoError(t, err)
	stime, err := strconv.ParseInt(fields[12], 10, 64)
	require.NoError(t, err)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
