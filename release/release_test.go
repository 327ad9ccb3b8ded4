// Package release checks the release pipeline as far as a machine without a registry, a GitHub
// runner or a container engine can: the GoReleaser configuration passes `goreleaser check`, the
// workflows pass actionlint (with shellcheck on their scripts), `make build`, the Dockerfile and
// GoReleaser build the binary with the same flags, `make build` stamps what `git describe`
// says, the packaged chart deploys the image of its tag, and .dockerignore keeps the build
// context to the sources. The pinned tools come from `make tools` (bin/tools).
package release

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// root is the repository, seen from this package.
const root = ".."

// tool returns the path of a pinned tool installed by `make tools`. It never skips: a missing
// tool fails the test with the command that installs it.
func tool(t *testing.T, name, envVar string) string {
	t.Helper()
	p := os.Getenv(envVar)
	if p == "" {
		p = filepath.Join(root, "bin", "tools", name)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("%s not found at %s: run `make tools`, which installs the pinned version into bin/tools (`make test` does it first)", name, abs)
	}
	return abs
}

// command returns the path of a command installed on the machine (`make shells` installs them).
func command(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed: run `make shells` (`make test` does it first)", name)
	}
	return p
}

// run runs a command in dir with extra environment variables and returns its standard output;
// the error carries its standard error.
func run(t *testing.T, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(name), strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.String(), nil
}

// helmHome is the environment of a helm run that keeps its caches in a scratch folder.
func helmHome(t *testing.T) []string {
	home := t.TempDir()
	return []string{"HELM_CACHE_HOME=" + home + "/cache", "HELM_CONFIG_HOME=" + home + "/config", "HELM_DATA_HOME=" + home + "/data"}
}

func mustRun(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := run(t, dir, env, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readFile reads a file of the repository.
func readFile(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
