package scheduling

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRescheduleWithPolicyMatches: the policies evaluated ahead give the schedule Reschedule
// makes without them; evaluated for another snapshot, they are not used.
func TestRescheduleWithPolicyMatches(t *testing.T) {
	prev := fixtureSnapshot(t, policy("p", "", "{}", "{}"))
	next := fixtureSnapshot(t, policy("p", "", "{}", "{matchLabels: {size: large}}")+policy("q", "", "{matchLabels: {purpose: test}}", "{}"))
	earlier, d := Schedule(prev), Diff(prev, next)
	want := Schedule(next)
	require.NotEqual(t, keys(earlier), keys(want), "the change reschedules")
	for name, m := range map[string]*PolicyMatches{"of next": MatchPolicies(next), "of prev": MatchPolicies(prev), "none": nil} {
		got := Reschedule(prev, earlier, next, d, WithPolicyMatches(m))
		require.Equal(t, keys(want), keys(got.Assignments), name)
		for k, a := range want {
			require.Equal(t, a.Policies, got.Assignments[k].Policies, name)
		}
		requireRows(t, next, got)
	}
}

// TestRescheduleWithEarlierRows: the rows of the earlier schedule given ahead give the
// schedule Reschedule makes without them; rows that do not fit are not used.
func TestRescheduleWithEarlierRows(t *testing.T) {
	prev := fixtureSnapshot(t, policy("p", "", "{}", "{}"))
	next := fixtureSnapshot(t, policy("p", "", "{}", "{matchLabels: {size: large}}")+policy("q", "", "{matchLabels: {purpose: test}}", "{}"))
	earlier, d := Schedule(prev), Diff(prev, next)
	rows := Reschedule(prev, earlier, prev, Diff(prev, prev)).Rows
	require.Len(t, rows, len(prev.ClusterTypes)+1)
	want := Reschedule(prev, earlier, next, d)
	misfits := map[string][]int{"short": rows[1:], "wrong end": append(append([]int(nil), rows[:len(rows)-1]...), len(earlier)-1),
		"decreasing": append([]int{0, len(earlier)}, rows[2:]...), "none": nil}
	for name, r := range misfits {
		got := Reschedule(prev, earlier, next, d, WithEarlierRows(r))
		require.Equal(t, want, got, name)
	}
	got := Reschedule(prev, earlier, next, d, WithEarlierRows(rows))
	require.Equal(t, want, got)
	requireRows(t, next, got)
}

// TestSearchRowFindsWhatABinarySearchFinds: galloping from any start finds, in any row,
// the first assignment at or after the start whose target's name is not below the name.
func TestSearchRowFindsWhatABinarySearchFinds(t *testing.T) {
	names := []string{"a", "b", "b1", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"}
	for n := 0; n <= len(names); n++ {
		row := make([]*Assignment, n)
		for i := range row {
			row[i] = &Assignment{Target: &DeploymentTarget{Object: Object{Name: names[i]}}}
		}
		for j := 0; j <= n; j++ {
			for _, name := range append([]string{"", "0", "b0", "zz"}, names...) {
				want := j + sort.Search(n-j, func(i int) bool { return row[j+i].Target.Name >= name })
				require.Equal(t, want, SearchRow(row, j, name), "row of %d from %d, %q", n, j, name)
			}
		}
	}
}
