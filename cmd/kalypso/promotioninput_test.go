package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// environmentDecl is an Environment of the sample's control plane with a promotion section.
func environmentDecl(name, promotion string) string {
	return `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata:
  name: ` + name + `
spec:
  controlPlane:
    repo: https://github.com/microsoft/kalypso-control-plane
    branch: ` + name + `
    path: .
  promotion:
` + promotion
}

// TestBadPromotionInput: broken promotion settings on main fail validate, in directory mode
// and in git mode (which reads main as the app's check run of a main commit does), with the
// errors at their lines; an environment whose declaration is invalid is said to be declared
// but invalid, not undeclared.
func TestBadPromotionInput(t *testing.T) {
	cases := []struct {
		name  string
		decls map[string]string // .environments/ files added to main
		want  []string          // regexps, each matched against stderr
	}{
		{
			name:  "unknown upstream",
			decls: map[string]string{"stage.yaml": environmentDecl("stage", "    after: staging\n")},
			want:  []string{`\.environments/stage\.yaml:11: Environment "stage": spec\.promotion\.after: environment "staging" does not exist or has no spec\.promotion`},
		},
		{
			name:  "an environment after itself",
			decls: map[string]string{"prod.yaml": environmentDecl("prod", "    after: prod\n")},
			want:  []string{`\.environments/prod\.yaml:11: Environment "prod": spec\.promotion\.after: an environment cannot follow itself`},
		},
		{
			name:  "soak time that is not a duration",
			decls: map[string]string{"stage.yaml": environmentDecl("stage", "    soakTime: 10 minutes\n")},
			want:  []string{`\.environments/stage\.yaml:11: Environment "stage": spec\.promotion\.soakTime: "10 minutes" is not a duration such as 30s, 10m or 1h`},
		},
		{
			name:  "the environment validated declared with a bad approval",
			decls: map[string]string{"dev.yaml": environmentDecl("dev", "    approval: auto\n")},
			want: []string{
				`\.environments/dev\.yaml:11: Environment "dev": spec\.promotion\.approval: "auto" is not one of automatic, manual`,
				`environment "dev" is declared but invalid at \S*\.environments/dev\.yaml:1 \(see its errors\)`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name+" in directory mode", func(t *testing.T) {
			f := newFleetFixture(t)
			for file, content := range tc.decls {
				f.write(t, "main", ".environments/"+file, content)
			}
			code, stdout, stderr := runCLI(t, append([]string{"validate", "--environment", "dev"}, f.args()...)...)
			require.Equal(t, 1, code, "validate: %s%s", stdout, stderr)
			for _, want := range tc.want {
				require.Regexp(t, regexp.MustCompile(want), stderr)
			}
		})
		t.Run(tc.name+" in git mode", func(t *testing.T) {
			repo, _ := sampleRepo(t)
			for file, content := range tc.decls {
				require.NoError(t, os.WriteFile(filepath.Join(repo, ".environments", file), []byte(content), 0o644))
			}
			gitRun(t, repo, "add", "-A")
			gitRun(t, repo, "commit", "-q", "-m", "promotion")
			code, stdout, stderr := runCLI(t, "validate", "--repo", repo, "--environment", "dev", "--workloads-dir", filepath.Join(sampleDir, "input/workload-sources"))
			require.Equal(t, 1, code, "validate: %s%s", stdout, stderr)
			for _, want := range tc.want {
				require.Regexp(t, regexp.MustCompile(strings.Replace(want, `\.environments`, `main:\.environments`, 1)), stderr)
			}
		})
	}
}
