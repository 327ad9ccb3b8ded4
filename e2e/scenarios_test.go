package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// The first resync proposes the sample's current output for every environment, and the pull
// request holds exactly the rendered files.
func TestE2EResyncOpensOnePullRequestPerEnvironment(t *testing.T) {
	w := newWorld(t)
	w.start()
	prs := w.appPRs()
	require.Len(t, prs, 2)
	dev := w.tree("kalypso/dev")
	require.Equal(t, w.seeded.MainSHA, dev[".github/tracking/Promoted_Commit_Id"])
	require.Contains(t, dev, "large/observability-prometheus/platform-config.yaml")
	require.NotContains(t, dev, "large/observability-prometheus/config.yaml")
	require.Contains(t, w.appPR("dev").GetBody(), "observability-prometheus")
	_ = sample.Owner
}
