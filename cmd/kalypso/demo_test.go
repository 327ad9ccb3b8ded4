package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDemoRunsOnTheBuiltInSample(t *testing.T) {
	code, stdout, stderr := runCLI(t, "demo")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "== environment dev: 4 cluster types, 1 deployment targets, 1 assignments, 0 errors")
	require.Contains(t, stdout, "removed  large/observability-prometheus/config.yaml")
	require.Contains(t, stdout, "== environment stage: 2 cluster types, 0 deployment targets, 0 assignments, 0 errors")
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
