package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitRun runs git in dir and returns its trimmed output.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// sampleRepo builds a control-plane repository with the sample's main, dev and stage branches;
// the environments pin main's HEAD.
func sampleRepo(t *testing.T) (dir, mainSHA string) {
	t.Helper()
	dir = t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(sampleDir, "input/control-plane/main"))))
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "main")
	mainSHA = gitRun(t, dir, "rev-parse", "HEAD")
	for _, env := range []string{"dev", "stage"} {
		gitRun(t, dir, "checkout", "-q", "--orphan", env)
		gitRun(t, dir, "rm", "-q", "-r", "-f", ".")
		require.NoError(t, os.CopyFS(dir, os.DirFS(pinnedEnvDir(t, env, mainSHA))))
		gitRun(t, dir, "add", "-A")
		gitRun(t, dir, "commit", "-q", "-m", env)
	}
	gitRun(t, dir, "checkout", "-q", "main")
	return dir, mainSHA
}

func TestGitModeRendersLikeDirectoryMode(t *testing.T) {
	repo, mainSHA := sampleRepo(t)
	workloads := filepath.Join(sampleDir, "input/workload-sources")
	for _, env := range []string{"dev", "stage"} {
		t.Run(env, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runCLI(t, "render", "--repo", repo, "--environment", env, "--workloads-dir", workloads, "--out", out)
			require.Equal(t, 0, code, stderr)
			require.Contains(t, stdout, "environment "+env)
			want := readDir(t, filepath.Join(sampleDir, "derived/main-head-promoted", env))
			delete(want, "large/observability-prometheus/config.yaml")
			want[".github/tracking/Promoted_Commit_Id"] = mainSHA
			require.Equal(t, want, readDir(t, out))
		})
	}
}

func TestGitModeErrorsNameTheBranch(t *testing.T) {
	repo, _ := sampleRepo(t)
	gitRun(t, repo, "checkout", "-q", "dev")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "gitops-repo.yaml"), []byte("apiVersion: scheduler.kalypso.io/v1alpha1\nkind: GitOpsRepo\nmetadata:\n  name: dev\nspec:\n  repo: r\n  branch: dev\n  pathh: .\n"), 0o644))
	gitRun(t, repo, "commit", "-q", "-am", "typo")
	code, _, stderr := runCLI(t, "validate", "--repo", repo, "--environment", "dev", "--workloads-dir", filepath.Join(sampleDir, "input/workload-sources"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `dev:gitops-repo.yaml:8: GitOpsRepo "dev": spec: unknown field "pathh"`)

	code, _, stderr = runCLI(t, "validate", "--repo", repo, "--environment", "prod")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `environment "prod" is not declared in main:.environments/`)
}

// In git mode the clone's history tells which of two registrations delivering the same Workload
// name is older, as the app's does: the older keeps it, the newer gets the error.
func TestGitModeOlderRegistrationKeepsAContestedName(t *testing.T) {
	repo, _ := sampleRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(repo, "workloads", "aaa-other.yaml"), []byte(otherRegistration), 0o644))
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-q", "-m", "a newer registration, named to sort first")
	head := gitRun(t, repo, "rev-parse", "HEAD")
	gitRun(t, repo, "checkout", "-q", "dev")
	pin, err := os.ReadFile(filepath.Join(repo, "base-repo.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(repo, "base-repo.yaml"), regexp.MustCompile(`commit: [0-9a-f]+`).ReplaceAll(pin, []byte("commit: "+head)), 0o644))
	gitRun(t, repo, "commit", "-q", "-am", "pin")
	gitRun(t, repo, "checkout", "-q", "main")

	workloads := t.TempDir()
	require.NoError(t, os.CopyFS(workloads, os.DirFS(filepath.Join(sampleDir, "input/workload-sources"))))
	other := filepath.Join(workloads, "other/svc-src/main/workloads")
	require.NoError(t, os.MkdirAll(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "observability.yaml"), []byte(strings.ReplaceAll(observabilityWorkload, "./prometheus", "./stolen")), 0o644))

	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI(t, "render", "--repo", repo, "--environment", "dev", "--workloads-dir", workloads, "--out", out)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `other/svc-src/main/workloads/observability.yaml:1: Workload "observability": Workload "observability" is also defined at`)
	data, err := os.ReadFile(filepath.Join(out, "large/observability-prometheus/reconciler.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(data), "./prometheus", "the older registration keeps the name")
}
