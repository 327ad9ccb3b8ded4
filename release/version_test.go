package release

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// `make build` stamps the binary with what `git describe --tags --always --dirty` says of the
// checkout, and the commit; `kalypso version` and `kalypso --version` report them.
func TestMakeBuildReportsGitDescribe(t *testing.T) {
	describe := strings.TrimSpace(mustRun(t, root, nil, "git", "describe", "--tags", "--always", "--dirty"))
	head := strings.TrimSpace(mustRun(t, root, nil, "git", "rev-parse", "HEAD"))
	bin := filepath.Join(t.TempDir(), "kalypso")
	mustRun(t, root, nil, "make", "--no-print-directory", "build", "BIN="+bin)

	out := mustRun(t, ".", nil, bin, "version")
	if first := strings.SplitN(out, "\n", 2)[0]; first != "kalypso "+describe {
		t.Errorf("kalypso version says %q, git describe %q", first, describe)
	}
	if !strings.Contains(out, "commit: "+head+"\n") {
		t.Errorf("kalypso version does not name commit %s:\n%s", head, out)
	}
	if alias := mustRun(t, ".", nil, bin, "--version"); alias != out {
		t.Errorf("kalypso --version differs from kalypso version:\n%s\n%s", alias, out)
	}
	var info struct{ Version, Commit, Date, GoVersion string }
	if err := json.Unmarshal([]byte(mustRun(t, ".", nil, bin, "version", "--output", "json")), &info); err != nil {
		t.Fatal(err)
	}
	if info.Version != describe || info.Commit != head || !strings.HasPrefix(info.GoVersion, "go") || len(info.Date) != len("2006-01-02T15:04:05Z") {
		t.Errorf("kalypso version --output json: %+v", info)
	}
}

// A version given to make wins over git describe (the release workflow passes the tag).
func TestMakeBuildTakesAGivenVersion(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kalypso")
	mustRun(t, root, nil, "make", "--no-print-directory", "build", "BIN="+bin, "VERSION=v1.2.3", "COMMIT=abc", "BUILD_DATE=2030-01-02T03:04:05Z")
	want := "kalypso v1.2.3\n  commit: abc\n  built:  2030-01-02T03:04:05Z\n"
	if out := mustRun(t, ".", nil, bin, "version"); !strings.HasPrefix(out, want) {
		t.Errorf("got\n%s\nwant it to start with\n%s", out, want)
	}
}
