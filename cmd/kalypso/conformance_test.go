package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/render"
)

const (
	sampleDir  = "../../testdata/kalypso-sample"
	mainHeadID = "4a0821c4376423b6a9e6b010bac8fe96616bd6e7"
)

// pinnedEnvDir copies an environment branch of the sample and pins its BaseRepo to commit.
func pinnedEnvDir(t *testing.T, env, commit string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), env)
	require.NoError(t, os.CopyFS(dst, os.DirFS(filepath.Join(sampleDir, "input/control-plane", env))))
	path := filepath.Join(dst, "base-repo.yaml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data = regexp.MustCompile(`commit: [0-9a-f]+`).ReplaceAll(data, []byte("commit: "+commit))
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return dst
}

// runCLI runs the command line in-process and returns its exit status and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func sampleArgs(envDir string) []string {
	return []string{
		"--main-dir", filepath.Join(sampleDir, "input/control-plane/main"),
		"--env-dir", envDir,
		"--workloads-dir", filepath.Join(sampleDir, "input/workload-sources"),
	}
}

// withoutWarnings drops the "kalypso: warning:" lines of an output.
func withoutWarnings(out string) string {
	var kept []string
	for _, line := range strings.SplitAfter(out, "\n") {
		if !strings.HasPrefix(line, "kalypso: warning: ") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}

// readDir reads every file below dir into a map of slash paths to contents.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree, err := readTree(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for p, c := range tree {
		out[p] = string(c)
	}
	return out
}

// TestConformanceMainHeadPromoted renders the public Kalypso sample with main HEAD promoted and
// compares byte for byte with what the reference scheduler produces, minus the stale
// config.yaml that the reference leaves behind (deleting it is a deliberate fix).
func TestConformanceMainHeadPromoted(t *testing.T) {
	for _, env := range []string{"dev", "stage"} {
		t.Run(env, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runCLI(t, append([]string{"render", "--out", out}, sampleArgs(pinnedEnvDir(t, env, mainHeadID))...)...)
			require.Equal(t, 0, code, "stderr: %s", stderr)
			require.Empty(t, withoutWarnings(stderr))
			require.Contains(t, stdout, "environment "+env)

			want := readDir(t, filepath.Join(sampleDir, "derived/main-head-promoted", env))
			delete(want, "large/observability-prometheus/config.yaml")
			require.Equal(t, want, readDir(t, out))
		})
	}
}

// TestConformanceStaleFileRemoved renders dev over the GitOps branch as the reference left it:
// the old config.yaml inside the deployment-target folder is removed, nothing else differs.
func TestConformanceStaleFileRemoved(t *testing.T) {
	out := filepath.Join(t.TempDir(), "gitops")
	require.NoError(t, os.CopyFS(out, os.DirFS(filepath.Join(sampleDir, "derived/main-head-promoted/dev"))))
	require.FileExists(t, filepath.Join(out, "large/observability-prometheus/config.yaml"))

	code, stdout, stderr := runCLI(t, append([]string{"render", "--out", out}, sampleArgs(pinnedEnvDir(t, "dev", mainHeadID))...)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "0 files written, 1 removed")
	require.NoFileExists(t, filepath.Join(out, "large/observability-prometheus/config.yaml"))
}

// TestConformancePinnedOldMain renders dev with the pin the sample really has: main@5523a85,
// whose templates use the format the current API rejects. The errors name the files; the
// output is the reference's (cluster-type READMEs and the promoted commit, nothing scheduled).
func TestConformancePinnedOldMain(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	args := sampleArgs(filepath.Join(sampleDir, "input/control-plane/dev"))
	args[1] = filepath.Join(sampleDir, "input/control-plane/main-at-5523a85")
	code, _, stderr := runCLI(t, append([]string{"render", "--out", out}, args...)...)
	require.Equal(t, 1, code)
	require.Regexp(t, `templates/scheduler_v1alpha1_template_arc-flux.yaml:10: Template "arc-flux": spec.manifests\[0\]: expected a string, got a mapping`, stderr)
	want := readDir(t, filepath.Join(sampleDir, "derived/pinned-base-repo/dev"))
	require.Equal(t, want, readDir(t, out))
}

// TestConformanceBothExecutionPaths renders the sample with main HEAD promoted with simple
// manifests compiled and with text/template alone: both give the reference's tree.
func TestConformanceBothExecutionPaths(t *testing.T) {
	for _, env := range []string{"dev", "stage"} {
		in := inputFlags{mainDir: filepath.Join(sampleDir, "input/control-plane/main"), envDir: pinnedEnvDir(t, env, mainHeadID),
			workloadsDir: filepath.Join(sampleDir, "input/workload-sources"), githubURL: gitsource.DefaultGitHubURL}
		snap, _, err := in.load(io.Discard)
		require.NoError(t, err)
		want := readDir(t, filepath.Join(sampleDir, "derived/main-head-promoted", env))
		delete(want, "large/observability-prometheus/config.yaml")
		for name, opts := range map[string][]render.Option{"compiled": nil, "text/template": {render.WithTextTemplateOnly()}} {
			res := render.Environment(snap, opts...)
			require.Empty(t, res.Errors, name)
			got := map[string]string{}
			for p, c := range res.Apply(render.Tree{}) {
				got[p] = string(c)
			}
			require.Equal(t, want, got, "%s %s", env, name)
		}
	}
}
