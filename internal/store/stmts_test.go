package store

import (
	"context"
	"math/bits"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChunkedCoversEveryRowInPreparedShapes checks that chunked splits n rows into
// consecutive power-of-two chunks within the driver's limit, and that on SQLite every chunk
// of every Ingest statement runs a statement prepared at Open.
func TestChunkedCoversEveryRowInPreparedShapes(t *testing.T) {
	s, err := Open(context.Background(), Options{})
	require.NoError(t, err)
	defer s.Close()
	for _, q := range ingestSQL {
		for _, n := range []int{0, 1, 2, 3, 255, 256, 257, 300, 511, 512, 513, 1000, 2000} {
			next := 0
			require.NoError(t, s.chunked(n, q.cols, func(lo, hi int) error {
				require.Equal(t, next, lo, "chunks are consecutive")
				size := hi - lo
				require.Equal(t, 1, bits.OnesCount(uint(size)), "chunk of %d rows is a power of two", size)
				require.LessOrEqual(t, size*q.cols, s.dialect.maxParams())
				require.Contains(t, s.stmts, q.text(size), "the %d-row shape is prepared", size)
				next = hi
				return nil
			}))
			require.Equal(t, n, next, "every row is in a chunk")
		}
	}
}

// TestChunkedTakesLongestSlicesWithoutPreparedShapes checks that, on PostgreSQL (no shapes
// prepared at Open), each slice is as long as the limit allows.
func TestChunkedTakesLongestSlicesWithoutPreparedShapes(t *testing.T) {
	s := &Store{dialect: postgresDialect{}}
	for _, q := range ingestSQL {
		step := s.chunkRows(q.cols)
		for _, n := range []int{1, 300, step, step + 1, 3*step + 7} {
			var sizes []int
			require.NoError(t, s.chunked(n, q.cols, func(lo, hi int) error { sizes = append(sizes, hi-lo); return nil }))
			want := []int{}
			for left := n; left > 0; left -= min(step, left) {
				want = append(want, min(step, left))
			}
			require.Equal(t, want, sizes, "%d rows of %d columns", n, q.cols)
		}
	}
}

// TestSQLiteFileCheckpointsEvery32MiB checks the write-ahead log's settings of a store file:
// WAL mode, checkpointed every 8,192 pages rather than SQLite's 1,000.
func TestSQLiteFileCheckpointsEvery32MiB(t *testing.T) {
	s, err := Open(context.Background(), Options{Path: filepath.Join(t.TempDir(), "hub.db")})
	require.NoError(t, err)
	defer s.Close()
	var mode string
	var pages int
	require.NoError(t, s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	require.NoError(t, s.db.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&pages))
	require.Equal(t, "wal", mode)
	require.Equal(t, 8192, pages)
}
