package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func goreleaser(t *testing.T) string { return tool(t, "goreleaser", "KALYPSO_TEST_GORELEASER") }
func actionlint(t *testing.T) string { return tool(t, "actionlint", "KALYPSO_TEST_ACTIONLINT") }

func TestGoReleaserCheck(t *testing.T) {
	mustRun(t, root, nil, goreleaser(t), "check", "--config", ".goreleaser.yaml")
}

// The check is strict: a misspelt key fails it.
func TestGoReleaserCheckCatchesATypo(t *testing.T) {
	bad := strings.Replace(readFile(t, ".goreleaser.yaml"), "mod_timestamp:", "mod_timestmap:", 1)
	p := filepath.Join(t.TempDir(), "goreleaser.yaml")
	if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := run(t, root, nil, goreleaser(t), "check", "--config", p)
	if err == nil || !strings.Contains(err.Error(), "mod_timestmap") {
		t.Fatalf("goreleaser check accepted a misspelt key: %v", err)
	}
}

// actionlint checks every workflow: syntax, expressions, the inputs of known actions, job
// dependencies, and the scripts of run steps through shellcheck.
func TestWorkflowsLintClean(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("the workflows: %v %v", files, err)
	}
	args := append([]string{"-no-color", "-oneline", "-shellcheck", command(t, "shellcheck")}, files...)
	out, err := run(t, ".", nil, actionlint(t), args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

func TestActionlintCatchesMistakes(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, ".github", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(readFile(t, ".github/workflows/release.yml"), "needs: image", "needs: imag", 1)
	broken = strings.Replace(broken, `echo "version=$(git describe --tags --always --dirty)"`, `echo version=$(git describe --tags)`, 1)
	if err := os.WriteFile(filepath.Join(wf, "release.yml"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, dir, nil, actionlint(t), "-no-color", "-oneline", "-shellcheck", command(t, "shellcheck"), filepath.Join(wf, "release.yml"))
	if err == nil {
		t.Fatal("actionlint accepted a broken workflow")
	}
	for _, want := range []string{`job "chart" needs job "imag" which does not exist`, "SC2046"} {
		if !strings.Contains(out, want) {
			t.Errorf("actionlint did not report %q:\n%s", want, out)
		}
	}
}
