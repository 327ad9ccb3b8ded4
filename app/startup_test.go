package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/version"
)

// logLines decodes the JSON log lines written so far.
func logLines(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

func TestFirstLogLineNamesTheBuildAndAnEmptyControlPlanesIsWarned(t *testing.T) {
	gh := newFakeGitHub(t)
	s, logs := newTestServer(t, testConfig(t, gh.URL))
	start(t, s)
	lines := logLines(t, logs.String())
	first := lines[0]
	require.Equal(t, "kalypso starting", first["message"])
	require.Equal(t, "test", first["version"])
	require.Equal(t, version.Get().Commit, first["commit"])
	require.Equal(t, version.Get().GoVersion, first["go"])
	require.Equal(t, "warn", lines[1]["level"])
	require.Contains(t, lines[1]["message"], "controlPlanes is empty")
	require.Contains(t, lines[1]["message"], "KALYPSO_CONTROL_PLANES")

	metricsText := httptestGet(t, s.ManagementHandler(), "/metrics")
	require.Contains(t, metricsText, `kalypso_build_info{version="test",revision="`+version.Get().Commit+`",goversion="`+version.Get().GoVersion+`"} 1`+"\n")
}

func TestNoWarningWhenControlPlanesAreDeclared(t *testing.T) {
	gh := newFakeGitHub(t)
	cfg := testConfig(t, gh.URL)
	cfg.ControlPlanes = []string{"octo/platform-*"}
	s, logs := newTestServer(t, cfg)
	start(t, s)
	require.Equal(t, "kalypso starting", logLines(t, logs.String())[0]["message"])
	require.NotContains(t, logs.String(), "controlPlanes is empty")
}
