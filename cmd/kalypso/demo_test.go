package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDemoRunsTheAppAgainstTheSimulator(t *testing.T) {
	code, stdout, stderr := runCLI(t, "demo")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "#1 Kalypso: update dev from microsoft/kalypso-control-plane (kalypso/dev → dev")
	require.Contains(t, stdout, "#2 Kalypso: update stage from microsoft/kalypso-control-plane (kalypso/stage → stage")
	require.Contains(t, stdout, "| large | observability-prometheus | 1 | 2 | 1 |")
	require.Regexp(t, `check run "Kalypso / dev" on microsoft/kalypso-control-plane@[0-9a-f]{7}: success`, stdout)
	require.Regexp(t, `check run "Kalypso / dev" on microsoft/kalypso-svc-src@[0-9a-f]{7}: success`, stdout)
	require.Regexp(t, `check run "Kalypso / dev" on microsoft/kalypso-control-plane@[0-9a-f]{7}: failure — 2 errors in dev`, stdout)
	require.Contains(t, stdout, `cluster-types/west-us/large/large-cluster-type.yaml:10: ClusterType "large": spec: unknown field "namespaceServise"`)
	require.NotContains(t, stdout, "#3 ", "one pull request per environment")
}

func TestHelpForEveryCommand(t *testing.T) {
	for name := range commands() {
		code, _, stderr := runCLI(t, name, "--help")
		require.Equal(t, 0, code, name)
		require.Contains(t, stderr, "Usage: kalypso "+name, name)
	}
	code, _, stderr := runCLI(t, "render", "--no-such-flag")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "no-such-flag")
	code, _, stderr = runCLI(t, "render", "--main-dir", "/nonexistent", "--env-dir", "/nonexistent", "--out", t.TempDir())
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "flag --")
}
