package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDemoShowsTheHubGate(t *testing.T) {
	code, stdout, stderr := runCLI(t, "demo")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "36 signed reports accepted (edge-07 reports HealthCheckFailed)")
	require.Regexp(t, `status kalypso/dev on main [0-9a-f]{7}: success — deployed to 35 clusters`, stdout)
	require.Contains(t, stdout, "35 of 36 registered clusters compliant (minPercent 90); failed (within maxFailed): edge-07")
	require.Regexp(t, `microsoft/kalypso-control-plane/dev: 36 registered clusters, 35 compliant with GitOps [0-9a-f]{7}, 1 failed, 0 behind`, stdout)
	require.Regexp(t, `Open the hub at http://127\.0\.0\.1:\d+/fleet/hub/environments`, stdout)
}
