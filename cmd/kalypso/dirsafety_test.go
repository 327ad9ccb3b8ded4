package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// secretConfig is a platform config outside every source folder; a symbolic link must never
// bring it into the output.
const secretConfig = `apiVersion: v1
kind: ConfigMap
metadata:
  name: stolen
  labels:
    platform-config: "true"
data:
  STOLEN: outside-secret-value
`

// TestBadInputSymlinks: directory mode follows no symbolic link, whether it points out of the
// source folder or inside it, to a file or to a folder. Each is an error naming the link, the
// source is not read, and nothing already rendered is removed.
func TestBadInputSymlinks(t *testing.T) {
	cases := []struct {
		name         string
		which, link  string
		target       func(f *fleetFixture, outside string) string
		wantInOutput bool
	}{
		{"file pointing outside main", "main", "templates/stolen.yaml",
			func(_ *fleetFixture, outside string) string { return filepath.Join(outside, "secret.yaml") }, false},
		{"folder pointing outside the environment", "env", "configs/shared",
			func(_ *fleetFixture, outside string) string { return outside }, false},
		{"relative link out of the environment", "env", "configs/up.yaml",
			func(_ *fleetFixture, _ string) string { return "../../outside/secret.yaml" }, false},
		{"file pointing inside the environment", "env", "configs/copy.yaml",
			func(_ *fleetFixture, _ string) string { return "dev-config.yaml" }, false},
		{"workload file pointing outside", "workloads", "microsoft/kalypso-svc-src/main/workloads/extra.yaml",
			func(_ *fleetFixture, outside string) string { return filepath.Join(outside, "secret.yaml") }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleetFixture(t)
			outside := filepath.Join(filepath.Dir(f.env), "outside")
			require.NoError(t, os.MkdirAll(outside, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte(secretConfig), 0o644))
			out := filepath.Join(t.TempDir(), "out")
			before := renderFixture(t, f, out)

			require.NoError(t, os.Symlink(tc.target(f, outside), filepath.Join(f.dir(tc.which), tc.link)))
			want := regexp.QuoteMeta(displayDir(f.dir(tc.which))+tc.link) + ` is a symbolic link \(to .+\): directory mode does not follow symbolic links`
			code, stdout, stderr := runCLI(t, append([]string{"validate"}, f.args()...)...)
			require.Equal(t, 1, code, stdout+stderr)
			require.Regexp(t, want, stderr)

			code, _, stderr = runCLI(t, append([]string{"render", "--out", out}, f.args()...)...)
			require.Equal(t, 1, code, stderr)
			require.Regexp(t, want, stderr)
			after := readDir(t, out)
			for p := range before {
				require.Contains(t, after, p, "%s must not be removed because a source has a symbolic link", p)
			}
			for p, content := range after {
				require.NotContains(t, content, "outside-secret-value", p)
			}
		})
	}
}

// The folders given on the command line may themselves be symbolic links.
func TestDirectoryModeRootMayBeASymlink(t *testing.T) {
	f := newFleetFixture(t)
	link := filepath.Join(t.TempDir(), "dev")
	require.NoError(t, os.Symlink(f.env, link))
	f.env = link
	code, stdout, stderr := runCLI(t, append([]string{"validate"}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "environment dev is valid")
}

// TestBadInputEnvironmentName: when main declares environments, directory mode refuses a name
// that is not one of them (from --environment or from the --env-dir folder) and lists them.
func TestBadInputEnvironmentName(t *testing.T) {
	cases := []struct {
		name string
		args func(f *fleetFixture) []string
		want string
	}{
		{"wrong case", func(f *fleetFixture) []string { return append(f.args(), "--environment", "Dev") }, `environment "Dev" \(from flag --environment\) is not declared in .*/\.environments/ \(did you mean "dev"\?\); declared: dev, stage`},
		{"unknown name", func(f *fleetFixture) []string { return append(f.args(), "--environment", "prod") }, `environment "prod" \(from flag --environment\) is not declared in .*/\.environments/; declared: dev, stage`},
		{"folder name", func(f *fleetFixture) []string {
			env := filepath.Join(t.TempDir(), "env")
			require.NoError(t, os.Rename(f.env, env))
			f.env = env
			return f.args()
		}, `environment "env" \(from the --env-dir folder name; name it with --environment\) is not declared in .*/\.environments/; declared: dev, stage`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleetFixture(t)
			out := filepath.Join(t.TempDir(), "out")
			before := renderFixture(t, f, out)
			args := tc.args(f)
			for _, cmd := range [][]string{{"validate"}, {"plan", "--gitops-dir", out}, {"render", "--out", out}} {
				code, stdout, stderr := runCLI(t, append(cmd, args...)...)
				require.Equal(t, 2, code, "%s: %s%s", cmd[0], stdout, stderr)
				require.Regexp(t, tc.want, stderr)
				require.Empty(t, stdout)
			}
			require.Equal(t, before, readDir(t, out))
		})
	}
}

// An environment that main declares but that no deployment target is for gets a warning
// naming the environments the targets are for.
func TestWarningTargetsOnlyForOtherEnvironments(t *testing.T) {
	f := newFleetFixture(t)
	stage := pinnedEnvDir(t, "stage", mainHeadID)
	code, stdout, stderr := runCLI(t, "validate", "--main-dir", f.main, "--env-dir", stage, "--workloads-dir", f.workloads)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "0 deployment targets")
	require.Equal(t, "kalypso: warning: no deployment target is for environment stage; the workloads' deployment targets are for dev\n", stderr)

	code, _, stderr = runCLI(t, append([]string{"validate"}, f.args()...)...)
	require.Equal(t, 0, code)
	require.False(t, strings.Contains(stderr, "warning"), stderr)
}
