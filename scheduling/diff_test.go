package scheduling

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDiffOfTheSameSourcesIsEmpty(t *testing.T) {
	p := policy("p", "", "{}", "{}")
	d := Diff(fixtureSnapshot(t, p), fixtureSnapshot(t, p))
	require.Zero(t, d.Count())
	require.Empty(t, d.Changed)
	require.Empty(t, d.Broken)
}

func TestDiffListsObjectsByKindAndName(t *testing.T) {
	prev := fixtureSnapshot(t, policy("p", "", "{}", "{}")+policy("q", "", "{}", "{}"))
	next := fixtureSnapshot(t, policy("p", "", "{}", "{matchLabels: {size: large}}")+policy("r", "", "{}", "{}"))
	d := Diff(prev, next)
	require.Equal(t, map[string]map[string]bool{KindSchedulingPolicy: {"p": true, "q": true, "r": true}}, d.Changed)
	require.True(t, d.Has(KindSchedulingPolicy, "q"), "removed")
	require.False(t, d.GitOpsRepo || d.BaseRepo || d.Environment)
	require.Equal(t, 3, d.Count())
}

func TestDiffTellsMovedFromChanged(t *testing.T) {
	prev := fixtureSnapshot(t, policy("p", "", "{}", "{}"))
	next := fixtureSnapshot(t, "# a comment moves the policy down\n"+policy("p", "", "{}", "{}"))
	d := Diff(prev, next)
	require.Empty(t, d.Changed)
	require.Equal(t, map[string]map[string]bool{KindSchedulingPolicy: {"p": true}}, d.Moved)
	require.False(t, d.Same(KindSchedulingPolicy, "p"))
	require.Equal(t, 1, d.Count())
}

// TestDiffNoticesBrokenObjectsChangingOrder: broken objects are read in file order, so swapping
// two broken documents changes neither, but which broken ConfigMap an assignment reports first
// then changes.
func TestDiffNoticesBrokenObjectsChangingOrder(t *testing.T) {
	const a = "---\nkind: ConfigMap\nmetadata:\n  name: a\n"
	const b = "---\nkind: ConfigMap\nmetadata:\n  name: b\n  x: [unclosed\n"
	prev := fixtureSnapshot(t, b+a)
	next := fixtureSnapshot(t, a+b)
	names := func(s *Snapshot) []string {
		var out []string
		for _, b := range s.Broken {
			out = append(out, b.Name)
		}
		return out
	}
	require.Equal(t, []string{"b", "a"}, names(prev))
	require.Equal(t, []string{"a", "b"}, names(next))
	require.Equal(t, map[string]map[string]bool{KindConfigMap: {"a": true, "b": true}}, Diff(prev, next).Broken)
}

func TestRescheduleIsSchedule(t *testing.T) {
	variants := []string{
		"",
		policy("p", "", "{}", "{}"),
		policy("p", "", "{}", "{matchLabels: {size: large}}"),
		policy("p", "", "{matchLabels: {purpose: test}}", "{}") + policy("q", "", "{}", "{matchLabels: {region: west}}"),
		policy("q", "team-a", "{}", "{matchExpressions: [{key: region, operator: Exists}]}"),
		policy("p", "", "{}", "{}") + policy("q", "", "{}", "{}"),
		policy("p", "", "{matchExpressions: [{key: a, operator: Matches}]}", "{}"),
	}
	for i, from := range variants {
		for j, to := range variants {
			prev, next := fixtureSnapshot(t, from), fixtureSnapshot(t, to)
			earlier := Schedule(prev)
			got := Reschedule(prev, earlier, next, Diff(prev, next))
			want := Schedule(next)
			require.Equal(t, keys(want), keys(got.Assignments), "%d → %d", i, j)
			for k, a := range want {
				require.Equal(t, a.Policies, got.Assignments[k].Policies, "%d → %d", i, j)
			}
			requireRows(t, next, got)
			requireFreshAndRemoved(t, earlier, got)
			list, rows := MatchPolicies(next).Schedule()
			require.Equal(t, want, list)
			require.Equal(t, got.Rows, rows, "Schedule gives the rows Reschedule gives")
		}
	}
}

func requireRows(t *testing.T, snap *Snapshot, r *Rescheduled) {
	t.Helper()
	require.Len(t, r.Rows, len(snap.ClusterTypes)+1)
	for ci, c := range snap.ClusterTypes {
		for _, a := range r.Assignments[r.Rows[ci]:r.Rows[ci+1]] {
			require.Equal(t, c.Name, a.ClusterType.Name)
		}
	}
	require.Equal(t, len(r.Assignments), r.Rows[len(snap.ClusterTypes)])
}

// requireFreshAndRemoved checks that Fresh lists exactly the assignments that are new objects
// and Removed exactly the earlier pairs that are gone.
func requireFreshAndRemoved(t *testing.T, earlier []*Assignment, r *Rescheduled) {
	t.Helper()
	var fresh []int
	for i, a := range r.Assignments {
		if !slices.Contains(earlier, a) {
			fresh = append(fresh, i)
		}
	}
	require.Equal(t, fresh, append([]int(nil), r.Fresh...))
	var gone []string
	for _, a := range earlier {
		if !slices.Contains(keys(r.Assignments), a.Key()) {
			gone = append(gone, a.Key())
		}
	}
	require.ElementsMatch(t, gone, keys(r.Removed))
}
