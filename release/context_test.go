package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// dockerignore reads .dockerignore with Docker's own parser and matcher.
func dockerignore(t *testing.T) *patternmatcher.PatternMatcher {
	t.Helper()
	f, err := os.Open(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	return pm
}

// buildInputs lists the files of this module that `go build ./cmd/kalypso` reads: the Go files
// and embedded files of every package it imports, and go.mod and go.sum.
func buildInputs(t *testing.T) []string {
	t.Helper()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, root, nil, "go", "list", "-deps", "-f",
		`{{if .Module}}{{if .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}{{end}}`,
		"./cmd/kalypso")
	files := []string{"go.mod", "go.sum"}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		rel, err := filepath.Rel(abs, line)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// The build context holds what the image's build needs and not the rest: bin/ (the pinned tools
// weigh over 100 MB after `make test`), .git, tests' data.
func TestDockerignoreKeepsOnlyTheSources(t *testing.T) {
	pm := dockerignore(t)
	inputs := buildInputs(t)
	if len(inputs) < 50 {
		t.Fatalf("go list found only %d files", len(inputs))
	}
	for _, f := range inputs {
		if ignored, err := pm.MatchesOrParentMatches(f); err != nil || ignored {
			t.Errorf("%s is needed by the build but .dockerignore leaves it out (%v)", f, err)
		}
	}
	for _, f := range []string{"bin/tools/helm", "bin/kalypso", ".git/HEAD", "dist/chart/kalypso-1.0.0.tgz",
		"testdata/kalypso-sample/README.md", "scheduling/testdata/fuzz/FuzzDecode/x", "e2e/harness_test.go", "kalypso"} {
		if ignored, err := pm.MatchesOrParentMatches(f); err != nil || !ignored {
			t.Errorf("%s goes into the build context (%v)", f, err)
		}
	}
}
