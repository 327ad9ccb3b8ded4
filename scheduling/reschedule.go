package scheduling

import (
	"maps"
	"slices"
	"sort"
)

// Rescheduled is an environment's schedule computed from the schedule of an earlier snapshot.
type Rescheduled struct {
	// Assignments is what Schedule returns for the new snapshot. An assignment whose cluster
	// type, deployment target and policies are unchanged is the earlier object itself (its
	// cluster type and target are then earlier objects, equal in content).
	Assignments []*Assignment
	// Rows gives where the assignments of each cluster type of the new snapshot start:
	// cluster type i has Assignments[Rows[i]:Rows[i+1]].
	Rows []int
	// Fresh lists the indices of the assignments that are new objects: a new pair, or a
	// pair whose cluster type, deployment target or policies changed.
	Fresh []int
	// Removed lists the earlier assignments whose pair no longer exists.
	Removed []*Assignment
}

// Reschedule computes Schedule(next) from earlier, the schedule of an earlier snapshot prev,
// and d = Diff(prev, next). A cluster type whose row no change can reach is copied as a whole;
// otherwise only the deployment targets a change reaches are looked at, unless the cluster
// type itself changed or moved, or a changed policy starts or stops selecting it.
func Reschedule(prev *Snapshot, earlier []*Assignment, next *Snapshot, d *Delta, opts ...RescheduleOption) *Rescheduled {
	o := newRescheduleOptions(opts)
	r := newRescheduler(prev, next, d, o.matchesOf(next))
	rows := o.earlierRows(prev, earlier)
	r.out.Assignments = make([]*Assignment, 0, len(earlier))
	r.out.Rows = make([]int, 0, len(next.ClusterTypes)+1)
	for ci, c := range next.ClusterTypes {
		r.out.Rows = append(r.out.Rows, len(r.out.Assignments))
		old := rows[c.Name]
		delete(rows, c.Name)
		r.row(ci, c, old)
	}
	r.out.Rows = append(r.out.Rows, len(r.out.Assignments))
	for _, row := range sortedRows(rows) {
		r.out.Removed = append(r.out.Removed, row...)
	}
	return r.out
}

// rescheduler holds what every row of a reschedule needs.
type rescheduler struct {
	next       *Snapshot
	d          *Delta
	matches    []*policyMatch // the new snapshot's policies, evaluated
	targetSame []bool         // by index of the new snapshot's targets
	targets    []string       // names of the targets added, removed, changed or moved, sorted
	policies   []*policyChange
	selecting  []*policyMatch
	index      map[string]int // target index by name, -1 for none, as targetIndex found it
	out        *Rescheduled
}

func newRescheduler(prev, next *Snapshot, d *Delta, matches []*policyMatch) *rescheduler {
	r := &rescheduler{next: next, d: d, matches: matches, out: &Rescheduled{}}
	r.targetSame = make([]bool, len(next.Targets))
	for i, t := range next.Targets {
		r.targetSame[i] = d.Same(KindDeploymentTarget, t.Name)
	}
	r.targets = mergeNames([][]string{sortedNames(d.Changed[KindDeploymentTarget]), sortedNames(d.Moved[KindDeploymentTarget])})
	r.policies = policyChanges(prev, next, d)
	return r
}

// row appends the assignments of cluster type c (index ci), old being its earlier row.
func (r *rescheduler) row(ci int, c *ClusterType, old []*Assignment) {
	r.selecting = r.selecting[:0]
	for _, m := range r.matches {
		if m.clusterTypes[ci] {
			r.selecting = append(r.selecting, m)
		}
	}
	affected, whole := r.affected(c)
	switch {
	case whole || len(old) > 64 && len(affected)*8 > len(old): // walking the row costs less
		r.mergeRow(c, old)
	case len(affected) == 0:
		r.out.Assignments = append(r.out.Assignments, old...)
	default:
		r.patchRow(c, old, affected)
	}
}

// affected returns the targets whose assignment to c may differ from before, sorted, or
// whole when any of c's assignments may differ (c changed or moved, or a changed policy
// starts or stops selecting it).
func (r *rescheduler) affected(c *ClusterType) (names []string, whole bool) {
	if !r.d.Same(KindClusterType, c.Name) {
		return nil, true
	}
	lists := [][]string{r.targets}
	for _, pc := range r.policies {
		before, after := pc.selects(c)
		switch {
		case before != after:
			return nil, true
		case before:
			lists = append(lists, pc.flipped)
		}
	}
	return mergeNames(lists), false
}

// mergeRow appends the assignments of c, walking the earlier row (sorted by target name,
// like the targets) alongside.
func (r *rescheduler) mergeRow(c *ClusterType, old []*Assignment) {
	j := 0
	for ti, t := range r.next.Targets {
		if len(r.selecting) == 0 {
			break
		}
		if !selectedBy(r.selecting, ti) {
			continue
		}
		for j < len(old) && old[j].Target.Name < t.Name {
			r.out.Removed = append(r.out.Removed, old[j])
			j++
		}
		var was *Assignment
		if j < len(old) && old[j].Target.Name == t.Name {
			was = old[j]
			j++
		}
		r.place(c, was, ti)
	}
	r.out.Removed = append(r.out.Removed, old[j:]...)
}

// patchRow appends the earlier row of c, looking again only at the affected targets.
func (r *rescheduler) patchRow(c *ClusterType, old []*Assignment, affected []string) {
	j := 0
	for _, name := range affected {
		k := SearchRow(old, j, name)
		r.out.Assignments = append(r.out.Assignments, old[j:k]...)
		j = k
		var was *Assignment
		if j < len(old) && old[j].Target.Name == name {
			was = old[j]
			j++
		}
		ti, ok := r.targetIndex(name)
		switch {
		case ok && selectedBy(r.selecting, ti):
			r.place(c, was, ti)
		case was != nil:
			r.out.Removed = append(r.out.Removed, was)
		}
	}
	r.out.Assignments = append(r.out.Assignments, old[j:]...)
}

// place appends the assignment of target ti to c, reusing was when nothing about it changed.
func (r *rescheduler) place(c *ClusterType, was *Assignment, ti int) {
	if was != nil && r.d.Same(KindClusterType, c.Name) && r.targetSame[ti] && samePolicies(was.Policies, r.selecting, ti) {
		r.out.Assignments = append(r.out.Assignments, was)
		return
	}
	r.out.Fresh = append(r.out.Fresh, len(r.out.Assignments))
	r.out.Assignments = append(r.out.Assignments, &Assignment{ClusterType: c, Target: r.next.Targets[ti], Policies: policyNames(r.selecting, ti)})
}

// SearchRow returns the first index k ≥ j of row, assignments sorted by target name, whose
// target's name is not below name, galloping from j: names looked up in order, each often
// close to the one before, cost the log of their distance from the last, not of the row.
func SearchRow(row []*Assignment, j int, name string) int {
	lo, hi, step := j, j, 1
	for ; ; step *= 2 { // the answer is in [lo, hi] once the loop ends
		hi = lo + step - 1
		if hi >= len(row) {
			hi = len(row)
			break
		}
		if row[hi].Target.Name >= name {
			break
		}
		lo = hi + 1
	}
	return lo + sort.Search(hi-lo, func(i int) bool { return row[lo+i].Target.Name >= name })
}

// targetIndex returns the index of the named target in the new snapshot, found once per name.
func (r *rescheduler) targetIndex(name string) (int, bool) {
	if i, ok := r.index[name]; ok {
		return i, i >= 0
	}
	ts := r.next.Targets
	i := sort.Search(len(ts), func(i int) bool { return ts[i].Name >= name })
	if i == len(ts) || ts[i].Name != name {
		i = -1
	}
	if r.index == nil {
		r.index = map[string]int{}
	}
	r.index[name] = i
	return i, i >= 0
}

// earlierRows splits the earlier schedule into the row of each cluster type: by the rows of
// the options when they fit prev and earlier, else by rowsByClusterType.
func (o rescheduleOptions) earlierRows(prev *Snapshot, earlier []*Assignment) map[string][]*Assignment {
	cts := prev.ClusterTypes
	if len(o.rows) != len(cts)+1 || o.rows[0] != 0 || o.rows[len(cts)] != len(earlier) {
		return rowsByClusterType(earlier)
	}
	rows := make(map[string][]*Assignment, len(cts))
	for i, c := range cts {
		start, end := o.rows[i], o.rows[i+1]
		if start > end {
			return rowsByClusterType(earlier)
		}
		if start < end {
			rows[c.Name] = earlier[start:end:end]
		}
	}
	return rows
}

// rowsByClusterType splits a schedule, sorted by cluster type, into the row of each cluster
// type, finding each row's end by binary search.
func rowsByClusterType(list []*Assignment) map[string][]*Assignment {
	rows := map[string][]*Assignment{}
	for start := 0; start < len(list); {
		name := list[start].ClusterType.Name
		rest := list[start:]
		end := start + sort.Search(len(rest), func(i int) bool { return rest[i].ClusterType.Name > name })
		rows[name] = list[start:end:end]
		start = end
	}
	return rows
}

func sortedRows(rows map[string][]*Assignment) [][]*Assignment {
	out := make([][]*Assignment, 0, len(rows))
	for _, name := range slices.Sorted(maps.Keys(rows)) {
		out = append(out, rows[name])
	}
	return out
}

func sortedNames(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for name := range set {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// mergeNames returns the union of sorted lists without duplicates, sorted: the list
// itself when there is one, so the result must not be written.
func mergeNames(lists [][]string) []string {
	if len(lists) == 1 {
		return lists[0]
	}
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	sort.Strings(out)
	dedup := out[:0]
	for i, n := range out {
		if i == 0 || n != out[i-1] {
			dedup = append(dedup, n)
		}
	}
	return dedup
}

func selectedBy(policies []*policyMatch, ti int) bool {
	for _, m := range policies {
		if m.targets[ti] {
			return true
		}
	}
	return false
}

// samePolicies reports whether names are the policies that select target ti, in order.
func samePolicies(names []string, policies []*policyMatch, ti int) bool {
	k := 0
	for _, m := range policies {
		if !m.targets[ti] {
			continue
		}
		if k == len(names) || names[k] != m.name {
			return false
		}
		k++
	}
	return k == len(names)
}

func policyNames(policies []*policyMatch, ti int) []string {
	var names []string
	for _, m := range policies {
		if m.targets[ti] {
			names = append(names, m.name)
		}
	}
	return names
}
