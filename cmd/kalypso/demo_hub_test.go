package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func checkHubAct(t *testing.T, act string) {
	t.Helper()
	require.Regexp(t, `main [0-9a-f]{7} is pinned into dev; platform-lead merges pull request #\d+ as [0-9a-f]{7}`, act)
	require.Contains(t, act, "36 signed reports accepted (edge-07 reports HealthCheckFailed)")
	require.Regexp(t, `status kalypso/dev on main [0-9a-f]{7}: success — deployed to 35 clusters`, act)
	require.Contains(t, act, "35 of 36 registered clusters compliant (minPercent 90); failed (within maxFailed): edge-07")
	require.Regexp(t, `microsoft/kalypso-control-plane/dev: 36 registered clusters, 35 compliant with GitOps [0-9a-f]{7}, 1 failed, 0 behind`, act)
	require.Regexp(t, `Its pages are at http://127\.0\.0\.1:\d+/fleet/hub/environments`, act)
}
