package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Counts of one are singular: the sample's dev has one assignment, a typo makes one error.
func TestMessagesCountInTheRightNumber(t *testing.T) {
	env := pinnedEnvDir(t, "dev", mainHeadID)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, append([]string{"render", "--out", out}, sampleArgs(env)...)...)
	require.Equal(t, 0, code, stderr)
	files := len(readDir(t, out))
	require.Greater(t, files, 1)
	require.Contains(t, stdout, fmt.Sprintf("environment dev: 1 assignment rendered, 0 failed; %d files written", files))

	code, stdout, _ = runCLI(t, append([]string{"validate"}, sampleArgs(env)...)...)
	require.Equal(t, 0, code)
	require.Equal(t, "environment dev is valid: 4 cluster types, 1 deployment target, 1 assignment\n", stdout)

	require.NoError(t, os.WriteFile(filepath.Join(env, "typo.yaml"), []byte("apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: x\nspec:\n  reconciler: argocd\n  namespaceService: default\n  configType: configmap\n  colour: red\n"), 0o644))
	code, _, stderr = runCLI(t, append([]string{"validate"}, sampleArgs(env)...)...)
	require.Equal(t, 1, code)
	require.True(t, strings.HasSuffix(stderr, "\nenvironment dev: 1 error\n"), stderr)
}

// Directory mode without --workloads-dir says that it is needed to read the registrations.
func TestMessageWorkloadsDirNeeded(t *testing.T) {
	args := sampleArgs(pinnedEnvDir(t, "dev", mainHeadID))[:4]
	code, _, stderr := runCLI(t, append([]string{"validate"}, args...)...)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `WorkloadRegistration "platform-svc": cannot read the workload: https://github.com/microsoft/kalypso-svc-src branch main: directory mode reads registered workloads only from --workloads-dir DIR`)
}

// Git mode with a pinned commit that the clone does not have names the commit and how to
// fetch it, with exit status 1 (not a usage error).
func TestMessagePinnedCommitMissing(t *testing.T) {
	repo, _ := sampleRepo(t)
	gitRun(t, repo, "checkout", "-q", "dev")
	missing := strings.Repeat("deadbeef", 5)
	data, err := os.ReadFile(filepath.Join(repo, "base-repo.yaml"))
	require.NoError(t, err)
	pinned := regexp.MustCompile(`commit: [0-9a-f]+`).ReplaceAllString(string(data), "commit: "+missing)
	require.NoError(t, os.WriteFile(filepath.Join(repo, "base-repo.yaml"), []byte(pinned), 0o644))
	gitRun(t, repo, "commit", "-q", "-am", "pin a commit the clone lacks")
	gitRun(t, repo, "checkout", "-q", "main")

	code, stdout, stderr := runCLI(t, "validate", "--repo", repo, "--environment", "dev", "--workloads-dir", filepath.Join(sampleDir, "input/workload-sources"))
	require.Equal(t, 1, code, stdout+stderr)
	require.Contains(t, stderr, "main commit "+missing+" pinned by branch dev")
	require.Contains(t, stderr, "is not in the repository")
	require.Contains(t, stderr, "fetch it with: git -C "+repo+" fetch origin "+missing+"\n")
}

// The README's copy-paste example renders the shipped sample without an error, as the README
// and the sample's README describe it.
func TestReadmeExampleRendersTheSample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, block, ok := strings.Cut(string(readme), "go run ./cmd/kalypso render \\\n")
	require.True(t, ok, "the README has the example")
	block, _, _ = strings.Cut(block, "```")
	var args []string
	for _, field := range strings.Fields(strings.ReplaceAll(block, "\\\n", " ")) {
		if strings.HasPrefix(field, "testdata/") {
			field = filepath.Join("../..", field)
		}
		args = append(args, field)
	}
	out := filepath.Join(t.TempDir(), "out")
	require.Equal(t, "--out", args[len(args)-2])
	args[len(args)-1] = out

	code, stdout, stderr := runCLI(t, append([]string{"render"}, args...)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "1 assignment rendered, 0 failed")
	want := readDir(t, filepath.Join(sampleDir, "derived/main-head-promoted/dev"))
	delete(want, "large/observability-prometheus/config.yaml")
	got := readDir(t, out)
	delete(want, ".github/tracking/Promoted_Commit_Id")
	delete(got, ".github/tracking/Promoted_Commit_Id")
	require.Equal(t, want, got)
}
