package preview

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
	"github.com/stretchr/testify/require"
)

func TestFileDiffShowsTheWholeFile(t *testing.T) {
	got := FileDiff("ct/a/ns.yaml", []byte("a\nb\nc\n"), []byte("a\nB\nc\nd"))
	require.Equal(t, "--- a/ct/a/ns.yaml\n+++ b/ct/a/ns.yaml\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n\\ No newline at end of file\n", got)
	require.Equal(t, "--- /dev/null\n+++ b/x\n@@ -0,0 +1,1 @@\n+x\n", FileDiff("x", nil, []byte("x\n")))
	require.Equal(t, "--- a/x\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n", FileDiff("x", []byte("x\n"), nil))
}

func TestFileDiffOfHugeFilesStaysLinear(t *testing.T) {
	big := []byte(strings.Repeat("line\n", 3000))
	got := FileDiff("x", big, append([]byte("first\n"), big...))
	require.Equal(t, 3000, strings.Count(got, "\n-line"))
	require.Equal(t, 3000, strings.Count(got, "\n+line"))
}

// fleet builds a tree of n assignments in cluster type ct below root "gitops".
func fleet(t render.Tree, ct string, n int, content string) render.Tree {
	t["gitops/"+ct+"/README.md"] = []byte("readme\n")
	for i := range n {
		t[fmt.Sprintf("gitops/%s/t%03d/namespace.yaml", ct, i)] = []byte(content)
		t[fmt.Sprintf("gitops/%s/t%03d/reconciler.yaml", ct, i)] = []byte("r\n")
	}
	return t
}

func TestMeasureCountsAssignmentsAndClusterTypes(t *testing.T) {
	prev := fleet(fleet(render.Tree{"gitops/.github/x": []byte("1")}, "small", 10, "v1\n"), "large", 10, "v1\n")
	next := fleet(fleet(render.Tree{"gitops/.github/x": []byte("2")}, "small", 7, "v1\n"), "large", 12, "v1\n")
	next["gitops/large/t000/namespace.yaml"] = []byte("v2\n")
	delete(next, "gitops/large/t001/reconciler.yaml") // a file less is a change
	b := Measure(prev, next, "gitops")
	require.Equal(t, Blast{Assignments: 20, Added: 2, Changed: 2, Removed: 3, ClusterTypes: 2, Touched: 2}, b)
	require.Equal(t, Blast{Assignments: 20, ClusterTypes: 2}, Measure(prev, prev, "gitops"))
}

func limit(s string) *scheduling.Limit {
	l, ok := scheduling.ParseQuantity(s)
	if !ok {
		panic(s)
	}
	return &l
}

func TestCheckReportsTheFigureAgainstTheLimit(t *testing.T) {
	b := Blast{Assignments: 100, Added: 5, Changed: 40, Removed: 30, ClusterTypes: 30, Touched: 21}
	require.Nil(t, Check(nil, b))
	v := Check(&scheduling.Limits{Removed: limit("10%"), Changed: limit("50%"), ClusterTypes: limit("20"), Added: limit("5")}, b)
	require.Len(t, v, 2)
	require.Equal(t, "removes 30 of 100 assignments (30.0%), more than maxRemoved 10%", v[0].String())
	require.Equal(t, "touches 21 of 30 cluster types (70.0%), more than maxClusterTypes 20", v[1].String())
	require.Empty(t, Check(&scheduling.Limits{Removed: limit("30%")}, b))
	require.Len(t, Check(&scheduling.Limits{Added: limit("0%")}, Blast{Added: 1}), 1, "a new environment is all added")
}

func TestMarkdownKeepsWithinTheBudget(t *testing.T) {
	var sections []Section
	for i := range 300 {
		sections = append(sections, Section{Name: fmt.Sprintf("ct/t%03d", i), Summary: "1 file changed", Diff: strings.Repeat("+x\n", 100*(i%7))})
	}
	hint := "See everything with `kalypso plan --diff`."
	full := Markdown(sections, 1<<30, hint)
	require.Equal(t, 300, strings.Count(full, "<details>"))
	require.NotContains(t, full, hint)

	got := Markdown(sections, MaxCheckRunText, hint)
	require.LessOrEqual(t, len(got), MaxCheckRunText)
	shown := strings.Count(got, "<details>")
	require.Positive(t, shown)
	require.Less(t, shown, 300)
	require.Contains(t, got, fmt.Sprintf("**%d of the changed assignments are too large to show here**", 300-shown))
	require.True(t, strings.HasSuffix(got, hint))
	require.Equal(t, strings.Count(got, "<details>"), strings.Count(got, "</details>"), "only whole sections")

	tiny := Markdown(sections, 2000, hint)
	require.LessOrEqual(t, len(tiny), 2000)
	require.Regexp(t, `and \d+ more\.`, tiny)
}

func TestMarkdownFenceOutlastsBackticksInContent(t *testing.T) {
	got := Markdown([]Section{{Name: "ct/a", Summary: "1 file added", Diff: "+```\n+</details>\n"}}, MaxCheckRunText, "")
	require.Contains(t, got, "````diff\n+```\n+</details>\n````")
}

func TestByClusterType(t *testing.T) {
	prev := fleet(fleet(render.Tree{}, "small", 3, "v1\n"), "large", 2, "v1\n")
	next := fleet(fleet(render.Tree{}, "small", 2, "v1\n"), "large", 4, "v1\n")
	next["gitops/small/t000/namespace.yaml"] = []byte("v2\n")
	require.Equal(t, []Count{{ClusterType: "large", Added: 2}, {ClusterType: "small", Changed: 1, Removed: 1}}, ByClusterType(prev, next, "gitops"))
}

func TestMeasurePlanAgreesWithMeasure(t *testing.T) {
	prev := fleet(fleet(render.Tree{"gitops/.github/x": []byte("1")}, "small", 10, "v1\n"), "large", 10, "v1\n")
	next := fleet(fleet(render.Tree{"gitops/.github/x": []byte("2")}, "small", 7, "v1\n"), "large", 12, "v1\n")
	next["gitops/large/t000/namespace.yaml"] = []byte("v2\n")
	delete(next, "gitops/large/t001/reconciler.yaml")
	plan := render.Diff(prev, next, "gitops")
	got := MeasurePlan(prev.SortedPaths(), plan, "gitops", func(p string) bool { _, ok := next[p]; return ok })
	require.Equal(t, Measure(prev, next, "gitops"), got)
}

func TestNamesShowNoContent(t *testing.T) {
	prev := fleet(render.Tree{"gitops/.github/tracking/Promoted_Commit_Id": []byte("a\n")}, "large", 3, "DATABASE_URL: secret-1\n")
	next := fleet(render.Tree{"gitops/.github/tracking/Promoted_Commit_Id": []byte("b\n")}, "large", 2, "DATABASE_URL: secret-2\n")
	plan := render.Diff(prev, next, "gitops")
	got := Names(plan, MaxCheckRunText)
	require.Equal(t, "- `large/t000`: 1 file changed\n- `large/t001`: 1 file changed\n- `large/t002`: 2 files removed\n- `other files`: 1 file changed\n", got)
	require.NotContains(t, got, "secret")

	var many render.Plan
	for i := range 1000 {
		many.Groups = append(many.Groups, render.Group{ClusterType: "ct", Assignment: fmt.Sprintf("t%04d", i), Changes: []render.Change{{Path: "x", Kind: render.Added}}})
	}
	small := Names(&many, 500)
	require.LessOrEqual(t, len(small), 500)
	shown := strings.Count(small, ": 1 file added\n")
	require.Positive(t, shown)
	require.True(t, strings.HasSuffix(small, fmt.Sprintf("- … and %d more.\n", 1000-shown)), small)
}
