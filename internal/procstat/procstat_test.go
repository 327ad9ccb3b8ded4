//go:build linux

package procstat

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCPUGrowsWithWorkAndPeakRSSCoversTheHeap(t *testing.T) {
	before := CPU()
	deadline := time.Now().Add(20 * time.Millisecond)
	n := 0
	for time.Now().Before(deadline) {
		n++
	}
	require.Greater(t, CPU(), before, "after %d loops", n)
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = 1
	}
	require.GreaterOrEqual(t, PeakRSS(), int64(len(buf)))
}
