package release

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func helm(t *testing.T) string { return tool(t, "helm", "KALYPSO_TEST_HELM") }

// The chart the release publishes for tag v1.2.3 is version 1.2.3 with appVersion v1.2.3, and
// deploys the image of that tag by default.
func TestChartPackageTiesTheImageToTheTag(t *testing.T) {
	out := t.TempDir()
	mustRun(t, root, nil, "make", "--no-print-directory", "chart-package", "VERSION=v1.2.3", "CHART_OUT="+out)
	pkg := filepath.Join(out, "kalypso-1.2.3.tgz")

	var chart struct{ Version, AppVersion string }
	if err := yaml.Unmarshal([]byte(mustRun(t, ".", helmHome(t), helm(t), "show", "chart", pkg)), &chart); err != nil {
		t.Fatal(err)
	}
	if chart.Version != "1.2.3" || chart.AppVersion != "v1.2.3" {
		t.Errorf("packaged chart: version %q, appVersion %q", chart.Version, chart.AppVersion)
	}
	manifests := mustRun(t, ".", helmHome(t), helm(t), "template", "kalypso", pkg, "--namespace", "kalypso")
	images := regexp.MustCompile(`(?m)^\s+image: "?([^"\s]+)"?$`).FindAllStringSubmatch(manifests, -1)
	if len(images) != 1 || images[0][1] != "ghcr.io/kalypso-gitops/kalypso:v1.2.3" {
		t.Errorf("the packaged chart deploys %v, want ghcr.io/kalypso-gitops/kalypso:v1.2.3", images)
	}
}

// workflow decodes a workflow file.
func workflow(t *testing.T, name string) map[string]any {
	t.Helper()
	var wf map[string]any
	if err := yaml.Unmarshal([]byte(readFile(t, ".github/workflows/"+name)), &wf); err != nil {
		t.Fatal(err)
	}
	return wf
}

// makeVar reads a variable assigned with := or ?= in the Makefile.
func makeVar(t *testing.T, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` [:?]= (.+)$`).FindStringSubmatch(readFile(t, "Makefile"))
	if m == nil {
		t.Fatalf("Makefile sets no %s", name)
	}
	return m[1]
}

// The release workflow runs on tags, tests first, uses the GoReleaser the Makefile pins,
// builds the image for both architectures, packages the chart for the tag, and signs.
func TestReleaseWorkflowPublishesEverything(t *testing.T) {
	text := readFile(t, ".github/workflows/release.yml")
	wf := workflow(t, "release.yml")
	on, _ := wf["on"].(map[string]any)
	if on == nil { // YAML 1.1 reads the key on as true
		on, _ = wf["true"].(map[string]any)
	}
	push, _ := on["push"].(map[string]any)
	if tags, _ := push["tags"].([]any); len(tags) != 1 || tags[0] != "v*" {
		t.Errorf("release runs on %v, want tags v*", on)
	}
	jobs, _ := wf["jobs"].(map[string]any)
	for _, job := range []string{"binaries", "image"} {
		j, _ := jobs[job].(map[string]any)
		if j["needs"] != "test" {
			t.Errorf("job %s does not wait for the tests: needs %v", job, j["needs"])
		}
	}
	for _, want := range []string{
		"version: " + makeVar(t, "GORELEASER_VERSION"),
		"platforms: linux/amd64,linux/arm64",
		`make chart-package VERSION="$TAG"`,
		`cosign sign --yes "$IMAGE@$DIGEST"`,
		`cosign sign --yes "${CHARTS#oci://}/kalypso@$digest"`,
		"anchore/sbom-action/download-syft",
		"id-token: write",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("release.yml lacks %q", want)
		}
	}
}

// The release notes come from CHANGELOG.md: the chart's version has its section.
func TestChangelogHasTheChartsVersion(t *testing.T) {
	var chart struct{ Version string }
	if err := yaml.Unmarshal([]byte(readFile(t, "deploy/helm/kalypso/Chart.yaml")), &chart); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readFile(t, "CHANGELOG.md"), "\n## ["+chart.Version+"]") {
		t.Errorf("CHANGELOG.md has no section ## [%s]", chart.Version)
	}
}
