package promote

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every description the promoter writes reads back as what it says.
func TestStatusDescriptionsReadBack(t *testing.T) {
	cases := []struct {
		state, desc string
		want        Progress
		waiting     bool
	}{
		{"pending", waitingDesc(1, 3), Progress{Compliant: 1, Expected: 3}, true},
		{"pending", descAwaitMerge, Progress{}, false},
		{"success", deployedDesc(1), Progress{Compliant: 1, Expected: 1}, false},
		{"success", deployedDesc(4), Progress{Compliant: 4, Expected: 4}, false},
		{"success", "deployed to 2 clusters", Progress{Compliant: 2, Expected: 2}, false}, // written by earlier versions
		{"failure", failedDesc("kustomization/flux-system/abc"), Progress{FailedCluster: "kustomization/flux-system/abc"}, false},
		{"failure", timedOutDesc(30*time.Minute, 0, 2, " (missing: a, b)"), Progress{Compliant: 0, Expected: 2}, false},
		{"error", "superseded by 1234567", Progress{}, false},
	}
	for _, c := range cases {
		require.Equal(t, c.want, ReadProgress(c.state, c.desc), c.desc)
		require.Equal(t, c.waiting, IsWaiting(c.desc), c.desc)
	}
}
