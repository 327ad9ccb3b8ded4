package reconcile

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/render"
)

func TestTruncateAndPlanMarkdown(t *testing.T) {
	long := strings.Repeat("line of text\n", 10000)
	cut := truncate(long, 5000)
	require.LessOrEqual(t, len(cut), 5000)
	require.Contains(t, cut, "truncated:")
	require.Equal(t, "short", truncate("short", 5000))
	oneLine := strings.Repeat("é", 5000)
	cut = truncate(oneLine, 5001)
	require.LessOrEqual(t, len(cut), 5001)
	require.True(t, utf8.ValidString(cut), "no character is cut")

	plan := render.GroupChanges([]render.Change{
		{Path: "large/a/reconciler.yaml", Kind: render.Added}, {Path: "large/a/namespace.yaml", Kind: render.Added},
		{Path: "small/b/namespace.yaml", Kind: render.Removed}, {Path: ".github/tracking/Promoted_Commit_Id", Kind: render.Changed},
	}, "")
	md := PlanMarkdown(plan)
	require.Contains(t, md, "2 files added, 1 changed, 1 removed.")
	require.Contains(t, md, "| large | a | 2 | 0 | 0 |")
	require.Contains(t, md, "| small | b | 0 | 0 | 1 |")
	require.Contains(t, md, "- `.github/tracking/Promoted_Commit_Id` changed")
	require.Equal(t, "No changes.\n", PlanMarkdown(render.GroupChanges(nil, "")))

	var many []render.Change
	for i := range 5000 {
		many = append(many, render.Change{Path: fmt.Sprintf("large/t-%04d/namespace.yaml", i), Kind: render.Added})
	}
	many = append(many, render.Change{Path: ".github/tracking/Promoted_Commit_Id", Kind: render.Changed})
	md = PlanMarkdown(render.GroupChanges(many, ""))
	require.Contains(t, md, "5000 files added, 1 changed, 0 removed.", "the counts are of every change")
	require.Less(t, len(md), maxPlanRows+1000, "the table stops at its bound")
	rows := strings.Count(md, "| large | t-")
	require.Less(t, rows, 5000)
	require.Contains(t, md, fmt.Sprintf("… and %d more rows not listed.", 5000-rows))
	require.Contains(t, md, "- `.github/tracking/Promoted_Commit_Id` changed", "the other files are listed")
}
