package promote

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/store"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// BenchmarkGateDecision measures what a wait does once the deciding report is stored: count
// the 100,000 registered clusters by verdict in the store (SQLite), name the stragglers and
// decide the gate.
// Run with: go test -run '^$' -bench GateDecision -benchtime 10x ./internal/promote
func BenchmarkGateDecision(b *testing.B) {
	const clusters = 100000
	st, err := store.Open(context.Background(), store.Options{Path: filepath.Join(b.TempDir(), "hub.db")})
	require.NoError(b, err)
	defer st.Close()
	now := time.Now()
	batch := make([]store.Report, 0, clusters)
	for i := range clusters {
		commit := "merge"
		if i%20 == 0 {
			commit = "old" // 5 % stragglers: the gate at 95 % just holds
		}
		batch = append(batch, store.Report{ControlPlane: "org/cp", Environment: "dev", ClusterType: fmt.Sprintf("type-%03d", i%100),
			Cluster: fmt.Sprintf("cluster-%06d", i), Object: "Kustomization/flux-system/gitops", Source: "flux", GitOpsCommit: commit,
			State: store.StateSuccess, EventAt: now, ReceivedAt: now})
	}
	for lo := 0; lo < clusters; lo += 5000 {
		_, err := st.Ingest(context.Background(), batch[lo:lo+5000], store.IngestOptions{})
		require.NoError(b, err)
	}
	stage := &scheduling.Stage{Timeout: time.Hour, Gate: scheduling.Gate{MinPercent: 95}}
	cpu := cpuTime()
	b.ResetTimer()
	for range b.N {
		counts, err := st.GateCounts(context.Background(), "org/cp", "dev", []string{"merge"})
		require.NoError(b, err)
		names := func(verdict, clusterType string) []string {
			list, err := st.GateNames(context.Background(), "org/cp", "dev", []string{"merge"}, verdict, clusterType, namesShown)
			require.NoError(b, err)
			return list
		}
		v := gateVerdict(stage, time.Minute, gateFacts{counts: counts, names: names})
		require.True(b, v.success, v.detail())
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/decision")
	b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/decision")
}

// cpuTime is the CPU time the process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
