// Package version tells which build of Kalypso is running: the version, the commit and the
// build date stamped by the linker (make build, the release pipeline and the Dockerfile pass
// -ldflags "-X ...=..."), with what the Go toolchain recorded in the binary as a fallback.
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Stamped at build time with -ldflags "-X github.com/kalypso-gitops/kalypso/internal/version.version=v1.2.3 ...".
// They are the only package variables here and nothing assigns them at run time.
var (
	version string
	commit  string
	date    string
)

// Unknown is reported for a value neither stamped nor recorded by the toolchain.
const Unknown = "unknown"

// Info describes a build.
type Info struct {
	Version   string `json:"version"`   // the git describe of the commit (v1.2.3, v1.2.3-4-gabc1234, …) or the module version
	Commit    string `json:"commit"`    // the full commit hash
	Date      string `json:"date"`      // the build date (RFC 3339), or the commit date when not stamped
	GoVersion string `json:"goVersion"` // the Go toolchain that built the binary
}

// Get returns the running binary's build information.
func Get() Info {
	info, _ := debug.ReadBuildInfo()
	return resolve(version, commit, date, info)
}

// resolve prefers the stamped values and falls back to the build information the Go toolchain
// records (module version for go install, vcs.* settings for builds inside a git checkout).
func resolve(v, c, d string, bi *debug.BuildInfo) Info {
	out := Info{Version: v, Commit: c, Date: d, GoVersion: runtime.Version()}
	if bi == nil {
		return withUnknown(out)
	}
	out.GoVersion = bi.GoVersion
	if out.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		out.Version = bi.Main.Version
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if out.Commit == "" {
		out.Commit = settings["vcs.revision"]
		if out.Commit != "" && settings["vcs.modified"] == "true" && out.Version == "" {
			out.Version = "devel+" + short(out.Commit) + "-dirty"
		}
	}
	if out.Date == "" {
		out.Date = settings["vcs.time"]
	}
	if out.Version == "" && out.Commit != "" {
		out.Version = "devel+" + short(out.Commit)
	}
	return withUnknown(out)
}

// withUnknown names what is still missing.
func withUnknown(i Info) Info {
	for _, f := range []*string{&i.Version, &i.Commit, &i.Date} {
		if strings.TrimSpace(*f) == "" {
			*f = Unknown
		}
	}
	if i.Version == Unknown {
		i.Version = "devel"
	}
	return i
}

// short is the seven-character form of a commit hash.
func short(sha string) string { return sha[:min(7, len(sha))] }

// String is the one-line form: "kalypso v1.2.3 (commit COMMIT, built 2026-01-02T03:04:05Z, go1.26.0)".
func (i Info) String() string {
	return "kalypso " + i.Version + " (commit " + i.Commit + ", built " + i.Date + ", " + i.GoVersion + ")"
}
