package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/config"
)

func TestTestClockOnlyAgainstALoopbackGitHub(t *testing.T) {
	file := filepath.Join(t.TempDir(), "now")
	require.NoError(t, os.WriteFile(file, []byte("2026-03-29T01:30:00Z\n"), 0o600))
	env := func(k string) string {
		if k == testClockVariable {
			return file
		}
		return ""
	}
	cfg := &config.Config{}
	cfg.GitHub.V3APIURL = "https://api.github.com/"
	require.Nil(t, testClock(cfg, env), "never against GitHub")
	cfg.GitHub.V3APIURL = "http://127.0.0.1:8080/api/v3/"
	require.Nil(t, testClock(cfg, func(string) string { return "" }), "only when asked for")
	clock := testClock(cfg, env)
	require.NotNil(t, clock)
	require.Equal(t, time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC), clock())
	require.NoError(t, os.WriteFile(file, []byte("2026-03-29T02:30:00Z"), 0o600))
	require.Equal(t, time.Date(2026, 3, 29, 2, 30, 0, 0, time.UTC), clock(), "read at each call")
	require.NoError(t, os.WriteFile(file, []byte("not a time"), 0o600))
	require.WithinDuration(t, time.Now(), clock(), time.Minute, "an unreadable time is the real time")
}
