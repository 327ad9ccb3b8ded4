package version

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStampedValuesWin(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v9.9.9"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "ffff"}, {Key: "vcs.time", Value: "2001-01-01T00:00:00Z"}}}
	got := resolve("v1.2.3-4-gabcdef0", "abcdef0123", "2026-01-02T03:04:05Z", bi)
	require.Equal(t, Info{Version: "v1.2.3-4-gabcdef0", Commit: "abcdef0123", Date: "2026-01-02T03:04:05Z", GoVersion: "go1.26.0"}, got)
	require.Equal(t, "kalypso v1.2.3-4-gabcdef0 (commit abcdef0123, built 2026-01-02T03:04:05Z, go1.26.0)", got.String())
}

func TestFallbackToTheToolchainsBuildInfo(t *testing.T) {
	installed := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v1.4.0"}}
	require.Equal(t, Info{Version: "v1.4.0", Commit: Unknown, Date: Unknown, GoVersion: "go1.26.1"}, resolve("", "", "", installed),
		"go install module@version records the module version")

	checkout := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-03-04T05:06:07Z"}, {Key: "vcs.modified", Value: "true"}}}
	require.Equal(t, Info{Version: "devel+0123456-dirty", Commit: "0123456789abcdef", Date: "2026-03-04T05:06:07Z", GoVersion: "go1.26.1"},
		resolve("", "", "", checkout), "a build in a git checkout records the commit")

	require.Equal(t, "devel", resolve("", "", "", nil).Version)
	require.Equal(t, Unknown, resolve("", "", "", &debug.BuildInfo{}).Commit)
}
