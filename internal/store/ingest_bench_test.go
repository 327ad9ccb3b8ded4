package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

// BenchmarkIngest measures the store's write path alone, as the hub's single SQLite writer
// runs it: batches of 256 first reports of new clusters (the costliest case), then batches
// of reports of known clusters. Run with:
// go test -run '^$' -bench Ingest -benchtime 40000x ./internal/store
func BenchmarkIngest(b *testing.B) {
	for _, known := range []bool{false, true} {
		name := map[bool]string{false: "new-clusters", true: "known-clusters"}[known]
		b.Run(name, func(b *testing.B) {
			st, err := store.Open(context.Background(), store.Options{Path: filepath.Join(b.TempDir(), "hub.db")})
			require.NoError(b, err)
			b.Cleanup(func() { st.Close() })
			at := time.Now()
			batch := func(round, lo, hi int) []store.Report {
				var out []store.Report
				for i := lo; i < hi; i++ {
					c := i
					if known {
						c = i % 1000
					}
					out = append(out, store.Report{ControlPlane: "org/cp", Environment: "dev",
						ClusterType: fmt.Sprintf("type-%03d", c%100), Cluster: fmt.Sprintf("cluster-%06d", c),
						Object: "Kustomization/flux-system/gitops", Source: "flux", GitOpsCommit: fmt.Sprintf("%040d", round),
						State: store.StateSuccess, Reason: "ReconciliationSucceeded", Message: "Applied revision",
						EventAt: at.Add(time.Duration(i) * time.Millisecond), ReceivedAt: at, Digest: fmt.Sprintf("d-%d-%d", round, i)})
				}
				return out
			}
			const size = 256
			b.ResetTimer()
			for lo := 0; lo < b.N; lo += size {
				_, err := st.Ingest(context.Background(), batch(lo/size, lo, min(b.N, lo+size)), store.IngestOptions{ReplayWindow: time.Hour})
				require.NoError(b, err)
			}
		})
	}
}
