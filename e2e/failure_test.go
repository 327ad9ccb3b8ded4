package e2e

import (
	"fmt"
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

// A change with more errors than GitHub takes in one request (50 annotations) ends in one
// failing check run created in one request: the first 50 errors are annotations at their
// lines, the others are listed in its text; a file reports at most 20 errors and counts the
// rest.
func TestE2EManyErrorsEndInOneCheckRunWithBoundedAnnotations(t *testing.T) {
	const files, perFile = 4, 19
	changes := map[string]*string{}
	for f := range files {
		var b strings.Builder
		for i := range perFile {
			if i > 0 {
				b.WriteString("---\n")
			}
			b.WriteString(clusterType(fmt.Sprintf("broken-%d-%02d", f, i), "tiny") + "  colour: blue\n")
		}
		changes[fmt.Sprintf("cluster-types/broken-%d.yaml", f)] = str(b.String())
	}
	var many strings.Builder
	for i := range 30 {
		fmt.Fprintf(&many, "---\n%s  colour: blue\n", clusterType(fmt.Sprintf("many-%02d", i), "tiny"))
	}
	changes["cluster-types/many.yaml"] = str(many.String())
	w := newWorld(t)
	w.start()
	w.sim.ResetCalls()
	sha := w.commit(sample.ControlPlane, "dev", changes)

	runs := w.checks(sample.ControlPlane, sha, "dev")
	require.Len(t, runs, 1, "one check run for dev on the commit")
	require.Equal(t, "failure", runs[0].GetConclusion())
	require.Equal(t, "completed", runs[0].GetStatus())
	require.Zero(t, w.sim.CallCount("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"), "no request adds annotations")
	anns, _, err := w.sim.CheckRunDetails(runs[0].GetID())
	require.NoError(t, err)
	require.Len(t, anns, 50, "the first 50 errors are annotations")
	for _, a := range anns {
		require.Contains(t, a.GetPath(), "cluster-types/broken-")
		require.Contains(t, a.GetMessage(), `unknown field "colour"`)
	}
	total := files*perFile + 21 // many.yaml: 20 errors and one that counts the other 10
	require.Contains(t, runs[0].GetOutput().GetTitle(), fmt.Sprintf("%d errors", total))
	text := runs[0].GetOutput().GetText()
	require.Contains(t, text, fmt.Sprintf("%d more errors beyond the first 50, which are annotations", total-50))
	require.Contains(t, text, "cluster-types/many.yaml:")
	require.Contains(t, text, "and 10 more errors in this file (at most 20 are reported per file)")
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
	changes := map[string]*string{}
	for i := range n {
		changes[fmt.Sprintf("cluster-types/broken-%03d.yaml", i)] = str(fmt.Sprintf("%s  %s: 1\n", clusterType(fmt.Sprintf("broken-%03d", i), "tiny"), field))
	}
	w := newWorld(t)
	w.start()
	cpSHA := w.commit(sample.ControlPlane, "dev", changes)
	cpRun := w.check(sample.ControlPlane, cpSHA, "dev")
	require.NotNil(t, cpRun)
	require.Equal(t, "failure", cpRun.GetConclusion())
	anns, _, err := w.sim.CheckRunDetails(cpRun.GetID())
	require.NoError(t, err)
	require.Len(t, anns, 50, "the first errors are annotations on the commit that caused them")
	require.LessOrEqual(t, len([]rune(cpRun.GetOutput().GetText())), 65535, "the others are listed in the text, which fits")

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
