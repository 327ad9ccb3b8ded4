package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

const largeClusterType = "cluster-types/west-us/large/large-cluster-type.yaml"

// A broken file fails the commit's check run with an annotation at its file and line; the pull
// request keeps every other assignment current, and the broken assignment keeps its last good
// (merged) output.
func TestE2EBrokenFileFailsCheckRunAndIsIsolated(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]*string
		path  string // the annotated file
		line  int
		msg   string
	}{{
		name:  "cluster type with an unknown field",
		files: map[string]*string{largeClusterType: str(clusterType("large", "large") + "  colour: blue\n")},
		path:  largeClusterType, line: 12, msg: `unknown field "colour"`,
	}, {
		name:  "cluster type naming a missing template",
		files: map[string]*string{largeClusterType: str(strings.Replace(clusterType("large", "large"), "arc-flux", "nothere", 1))},
		path:  largeClusterType, line: 9, msg: `template "nothere" does not exist`,
	}, {
		name: "template that fails to execute",
		files: map[string]*string{
			largeClusterType: str(strings.Replace(clusterType("large", "large"), "arc-flux", "broken-flux", 1)),
			"templates/broken.yaml": str(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata:
  name: broken-flux
spec:
  type: reconciler
  manifests:
    - |
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: {{ .DeploymentTargetName }}
      data:
        x: {{ fail "no reconciler for this target" }}
`)},
		path: "templates/broken.yaml", line: 14, msg: "no reconciler for this target",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.start()
			// A second large cluster type, merged: both assignments have a last good output.
			w.commit(sample.ControlPlane, "dev", map[string]*string{"cluster-types/west-us/xl/xl-cluster-type.yaml": str(clusterType("xl", "large"))})
			pr := w.appPR("dev")
			require.NotNil(t, pr)
			_, err := w.sim.MergePR(sample.Owner, sample.GitOpsRepo, pr.GetNumber(), "platform-admin")
			require.NoError(t, err)
			w.settle()
			merged := w.tree("dev")
			require.Contains(t, merged, "xl/observability-prometheus/platform-config.yaml")

			// One commit both changes a value every assignment uses and breaks one of them.
			files := map[string]*string{"configs/dev-config.yaml": str(devConfig("Changed"))}
			for p, c := range tc.files {
				files[p] = c
			}
			sha := w.commit(sample.ControlPlane, "dev", files)

			run := w.check(sample.ControlPlane, sha, "dev")
			require.NotNil(t, run, "a check run on the broken commit")
			require.Equal(t, "failure", run.GetConclusion())
			anns, _, err := w.sim.CheckRunDetails(run.GetID())
			require.NoError(t, err)
			require.Len(t, anns, 1, "one annotation for the one error")
			require.Equal(t, tc.path, anns[0].GetPath(), "annotated file")
			require.Equal(t, tc.line, anns[0].GetStartLine(), "annotated line")
			require.Equal(t, "failure", anns[0].GetAnnotationLevel())
			require.Contains(t, anns[0].GetMessage(), tc.msg)

			prs := w.prsOf("kalypso/dev")
			require.Len(t, prs, 1, "the pull request carries the healthy changes")
			require.Contains(t, prs[0].GetBody(), tc.msg, "the pull request lists the error")
			got := w.tree("kalypso/dev")
			require.Contains(t, got["xl/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: Changed\n",
				"the healthy assignment is current")
			for p, content := range merged {
				if strings.HasPrefix(p, "large/") {
					require.Equal(t, content, got[p], "the broken assignment keeps its last good %s", p)
				}
			}
			for p := range got {
				if strings.HasPrefix(p, "large/") {
					require.Contains(t, merged, p, "no new file for the broken cluster type")
				}
			}
			requireTree(t, w.expected("dev"), got, "kalypso/dev against kalypso render")

			// Fixing the file brings the broken assignment up to date and the check to success.
			fix := map[string]*string{largeClusterType: str(clusterType("large", "large"))}
			for p := range tc.files {
				if p != largeClusterType {
					fix[p] = nil
				}
			}
			sha = w.commit(sample.ControlPlane, "dev", fix)
			require.Equal(t, "success", w.check(sample.ControlPlane, sha, "dev").GetConclusion())
			require.Contains(t, w.tree("kalypso/dev")["large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: Changed\n")
		})
	}
}

// A change with more errors than GitHub takes in one request (50 annotations) still ends in
// one failing check run holding every annotation.
func TestE2EManyErrorsEndInOneCheckRunWithAllAnnotations(t *testing.T) {
	const n = 73
	var b strings.Builder
	wantLines := make([]int, 0, n)
	line := 1
	for i := range n {
		if i > 0 {
			b.WriteString("---\n")
			line++
		}
		doc := clusterType(fmt.Sprintf("broken-%02d", i), "tiny") + "  colour: blue\n"
		b.WriteString(doc)
		wantLines = append(wantLines, line+strings.Count(doc, "\n")-1)
		line += strings.Count(doc, "\n")
	}
	w := newWorld(t)
	w.start()
	sha := w.commit(sample.ControlPlane, "dev", map[string]*string{"cluster-types/broken.yaml": str(b.String())})

	runs := w.checks(sample.ControlPlane, sha, "dev")
	require.Len(t, runs, 1, "one check run for dev on the commit")
	require.Equal(t, "failure", runs[0].GetConclusion())
	require.Equal(t, "completed", runs[0].GetStatus())
	anns, _, err := w.sim.CheckRunDetails(runs[0].GetID())
	require.NoError(t, err)
	require.Len(t, anns, n, "every error is an annotation")
	var lines []int
	for _, a := range anns {
		require.Equal(t, "cluster-types/broken.yaml", a.GetPath())
		require.Contains(t, a.GetMessage(), `unknown field "colour"`)
		lines = append(lines, a.GetStartLine())
	}
	sort.Ints(lines)
	require.Equal(t, wantLines, lines, "each annotation at its document's bad line")
	require.Contains(t, runs[0].GetOutput().GetTitle(), fmt.Sprintf("%d errors", n))
}

// A broken workload definition fails the check run on the workload repository's commit, with
// an annotation at its file and line; nothing merged is removed from the GitOps branch because of it.
func TestE2EBrokenWorkloadFailsCheckRunOnItsCommit(t *testing.T) {
	w := newWorld(t)
	w.start()
	pr := w.appPR("dev")
	require.NotNil(t, pr)
	_, err := w.sim.MergePR(sample.Owner, sample.GitOpsRepo, pr.GetNumber(), "platform-admin")
	require.NoError(t, err)
	w.settle()
	merged := w.tree("dev")
	require.Contains(t, merged, "large/observability-prometheus/platform-config.yaml")

	broken := strings.Replace(observability("./prometheus-v2"), "      environment: dev\n", "      environment: dev\n      replicas: 3\n", 1)
	sha := w.commit(sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(broken)})
	run := w.check(sample.WorkloadRepo, sha, "dev")
	require.NotNil(t, run, "a check run on the workload commit")
	require.Equal(t, "failure", run.GetConclusion())
	anns, _, err := w.sim.CheckRunDetails(run.GetID())
	require.NoError(t, err)
	require.Len(t, anns, 1)
	require.Equal(t, "workloads/observability.yaml", anns[0].GetPath())
	require.Equal(t, 12, anns[0].GetStartLine(), "the line of the unknown field")
	require.Contains(t, anns[0].GetMessage(), `unknown field "replicas"`)

	// A new cluster type is still proposed; the broken workload's assignments are held back.
	w.commit(sample.ControlPlane, "dev", map[string]*string{"cluster-types/west-us/xl/xl-cluster-type.yaml": str(clusterType("xl", "large"))})
	got := w.tree("kalypso/dev")
	require.Contains(t, got, "xl/README.md", "the healthy change is proposed")
	require.NotContains(t, got, "xl/observability-prometheus/reconciler.yaml", "no assignment from the broken workload")
	for p, content := range merged {
		require.Equal(t, content, got[p], "%s is kept while the workload is broken", p)
	}
	requireTree(t, w.expected("dev"), got, "kalypso/dev against kalypso render")
}

// Check runs and pull requests stay within GitHub's size limits however many errors there
// are: long output is truncated with a note, never refused.
func TestE2ECheckRunOutputStaysWithinSizeLimits(t *testing.T) {
	const n = 150
	field := strings.Repeat("x", 400)
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\n%s  %s: 1\n", clusterType(fmt.Sprintf("broken-%03d", i), "tiny"), field)
	}
	w := newWorld(t)
	w.start()
	cpSHA := w.commit(sample.ControlPlane, "dev", map[string]*string{"cluster-types/broken.yaml": str(b.String())})
	cpRun := w.check(sample.ControlPlane, cpSHA, "dev")
	require.NotNil(t, cpRun)
	require.Equal(t, "failure", cpRun.GetConclusion())
	anns, _, err := w.sim.CheckRunDetails(cpRun.GetID())
	require.NoError(t, err)
	require.Len(t, anns, n, "every error is an annotation on the commit that caused it")

	// On a workload commit the control plane's errors are not annotations: they go to the
	// text, which is too long for GitHub and must be truncated.
	sha := w.commit(sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(observability("./prometheus-v2"))})
	run := w.check(sample.WorkloadRepo, sha, "dev")
	require.NotNil(t, run, "the check run is created despite its size")
	require.Equal(t, "success", run.GetConclusion(), "the workload commit brings no error of its own")
	text := run.GetOutput().GetText()
	require.LessOrEqual(t, len([]rune(text)), 65535)
	require.LessOrEqual(t, len([]rune(run.GetOutput().GetSummary())), 65535)
	require.Contains(t, text, "truncated", "the cut is noted")
	require.Contains(t, text, "broken-000", "the first errors are shown")

	pr := w.appPR("dev")
	require.NotNil(t, pr)
	require.LessOrEqual(t, len([]rune(pr.GetBody())), 65536, "the pull request body fits")
	require.Contains(t, pr.GetBody(), "truncated")
	require.Contains(t, w.tree("kalypso/dev")["large/observability-prometheus/reconciler.yaml"], "./prometheus-v2")
}
