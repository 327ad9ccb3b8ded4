package main

import (
	"strings"
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

	// Each step says what it changed in the pull request, and step 3 why changes left it.
	steps := strings.Split(stdout, "\n1. ")[1]
	step1, rest, _ := strings.Cut(steps, "\n2. ")
	step2, step3, _ := strings.Cut(rest, "\n3. ")
	require.Regexp(t, `~ large/observability-prometheus/platform-config\.yaml\n.*ENVIRONMENT: Dev\s+→\s+ENVIRONMENT: Development`, step1)
	require.NotContains(t, step1, "reconciler.yaml")
	require.Regexp(t, `~ large/observability-prometheus/reconciler\.yaml\n.*path: "./prometheus"\s+→\s+path: "./prometheus-v2"`, step2)
	require.NotContains(t, step2, "platform-config.yaml")
	require.Contains(t, step3, "No longer proposed (back to their merged content): large/observability-prometheus/")
	require.Contains(t, step3, "Why: a broken ClusterType holds back what depends on it.")
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
