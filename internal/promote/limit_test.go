package promote

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// TestMoreClustersThanMayBeReadFailsTheWait checks that a GitOps commit with more cluster
// statuses than the app reads ends the wait at once, naming the setting, instead of waiting
// for the timeout.
func TestMoreClustersThanMayBeReadFailsTheWait(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "    compliance: {minClusters: 1}\n", stageAuto)
	w.gh.MaxStatuses = 1
	m1 := w.pinnedToDev("a")
	merge := w.merge("dev", m1)
	w.gh.SetStatus(gitopsRepo, merge, cluster1, "success")
	w.gh.SetStatus(gitopsRepo, merge, cluster2, "success")
	w.settle("dev")
	state, desc := w.status("dev", m1)
	require.Equal(t, "failure", state)
	require.Equal(t, "more than 1 commit statuses on "+gitopsRepo.String()+"@"+merge[:7]+" ("+ghport.SettingMaxStatuses+")", desc)
}
