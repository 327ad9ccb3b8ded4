package main

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// guideBlock matches the code blocks of docs/first-control-plane.md that are files of the
// control plane or of the workload repository: "# REPO@BRANCH: PATH" on their first line.
var guideBlock = regexp.MustCompile("(?s)```yaml\n# ([a-z-]+)@([a-z]+): (\\S+)\n(.*?)```")

// TestFirstControlPlaneGuide builds the repositories of docs/first-control-plane.md from its
// code blocks, as a reader would (stage starts from dev's files), and checks what the guide
// says the CLI prints and renders.
func TestFirstControlPlaneGuide(t *testing.T) {
	text, err := os.ReadFile("../../docs/first-control-plane.md")
	require.NoError(t, err)
	root := t.TempDir()
	dirs := map[string]string{
		"platform-control-plane@main":  filepath.Join(root, "main"),
		"platform-control-plane@dev":   filepath.Join(root, "dev"),
		"platform-control-plane@stage": filepath.Join(root, "stage"),
		"hello-world@main":             filepath.Join(root, "workloads", "my-org", "hello-world", "main"),
	}
	const mainSHA = "0123456789abcdef0123456789abcdef01234567"
	write := func(dir, rel, content string) {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(strings.ReplaceAll(content, "MAIN_SHA", mainSHA)), 0o644))
	}
	blocks := guideBlock.FindAllStringSubmatch(string(text), -1)
	require.Len(t, blocks, 15, "the guide's files")
	for _, b := range blocks {
		dir, ok := dirs[b[1]+"@"+b[2]]
		require.True(t, ok, "%s@%s is not a repository of the guide", b[1], b[2])
		write(dir, b[3], b[4])
		if b[1]+"@"+b[2] == "platform-control-plane@dev" {
			write(dirs["platform-control-plane@stage"], b[3], b[4]) // stage starts from dev's files
		}
	}
	// stage's own files were written after dev's, so they replaced the copies.
	for _, b := range blocks {
		if b[1]+"@"+b[2] == "platform-control-plane@stage" {
			write(dirs["platform-control-plane@stage"], b[3], b[4])
		}
	}
	args := func(env string) []string {
		return []string{"--main-dir", dirs["platform-control-plane@main"], "--env-dir", dirs["platform-control-plane@"+env],
			"--workloads-dir", filepath.Join(root, "workloads")}
	}
	for _, env := range []string{"dev", "stage"} {
		code, stdout, stderr := runCLI(t, append([]string{"validate"}, args(env)...)...)
		require.Equal(t, 0, code, stderr)
		require.Equal(t, "environment "+env+" is valid: 1 cluster type, 1 deployment target, 1 assignment\n", stdout)
	}

	out := filepath.Join(root, "gitops-dev")
	code, _, stderr := runCLI(t, append([]string{"render", "--out", out}, args("dev")...)...)
	require.Equal(t, 0, code, stderr)
	got := readDir(t, out)
	require.ElementsMatch(t, []string{"small/README.md", "small/hello-world-functional-test/reconciler.yaml",
		"small/hello-world-functional-test/namespace.yaml", "small/hello-world-functional-test/platform-config.yaml",
		".github/tracking/Promoted_Commit_Id"}, keys(got))
	require.Contains(t, got["small/hello-world-functional-test/namespace.yaml"], `name: "dev-small-hello-world-functional-test"`)
	require.Contains(t, got["small/hello-world-functional-test/reconciler.yaml"], `path: "./manifests/functional-test"`)
	config := got["small/hello-world-functional-test/platform-config.yaml"]
	for _, want := range []string{"ENVIRONMENT: dev", "LOG_LEVEL: debug", `REPLICAS: "1"`} {
		require.Contains(t, config, want)
	}
	require.Equal(t, mainSHA, got[".github/tracking/Promoted_Commit_Id"])
}

func keys(m map[string]string) []string { return slices.Collect(maps.Keys(m)) }
