package scheduling

import "reflect"

// MatchPoliciesSince evaluates the policies of next as MatchPolicies does, taking from
// earlier (the evaluation of an earlier snapshot; nil for none) every answer whose inputs are
// the same: what a policy with an unchanged spec said of a cluster type or deployment target
// that is the same object in both snapshots (a load through a ParseCache shares the objects
// that did not change; objects are read only once loaded). Only the rest is evaluated, so a
// change costs what it touches instead of every target times every policy.
func MatchPoliciesSince(earlier *PolicyMatches, next *Snapshot) *PolicyMatches {
	switch {
	case earlier != nil && earlier.of == next:
		return earlier
	case earlier == nil || earlier.of == nil:
		return MatchPolicies(next)
	}
	prev := earlier.of
	reused := reusableMatches(earlier, next)
	var cts, targets []int32 // made for the first policy that reuses
	var out []*policyMatch
	for _, p := range next.Policies {
		m0 := reused[p.Name]
		if m0 != nil && cts == nil {
			cts = sameObjects(prev.ClusterTypes, next.ClusterTypes)
			targets = sameObjects(prev.Targets, next.Targets)
		}
		if m := matchSince(p, m0, next, cts, targets); m != nil {
			out = append(out, m)
		}
	}
	sortMatches(out)
	return &PolicyMatches{of: next, list: out}
}

// reusableMatches returns, by policy name, the earlier evaluations of the policies of next
// whose spec did not change.
func reusableMatches(earlier *PolicyMatches, next *Snapshot) map[string]*policyMatch {
	byName := make(map[string]*policyMatch, len(earlier.list))
	for _, m := range earlier.list {
		byName[m.name] = m
	}
	specs := make(map[string]*SchedulingPolicy, len(earlier.of.Policies))
	for _, p := range earlier.of.Policies {
		specs[p.Name] = p
	}
	out := make(map[string]*policyMatch, len(next.Policies))
	for _, p := range next.Policies {
		q, ok := specs[p.Name]
		if m := byName[p.Name]; m != nil && ok && (q == p || reflect.DeepEqual(q.Spec, p.Spec)) {
			out[p.Name] = m
		}
	}
	return out
}

// matchSince evaluates policy p against next as matchPolicies does, taking the answer of m0
// (its earlier evaluation, or nil) for every object at[i] names the earlier index of; nil
// when p selects no cluster type.
func matchSince(p *SchedulingPolicy, m0 *policyMatch, next *Snapshot, cts, targets []int32) *policyMatch {
	m := &policyMatch{name: p.Name, clusterTypes: make([]bool, len(next.ClusterTypes))}
	selects := false
	for i, c := range next.ClusterTypes {
		if m0 != nil && cts[i] >= 0 {
			m.clusterTypes[i] = m0.clusterTypes[cts[i]]
		} else {
			m.clusterTypes[i] = p.SelectsClusterType(c)
		}
		selects = selects || m.clusterTypes[i]
	}
	if !selects {
		return nil
	}
	m.targets = make([]bool, len(next.Targets))
	for i, t := range next.Targets {
		if m0 != nil && targets[i] >= 0 {
			m.targets[i] = m0.targets[targets[i]]
		} else {
			m.targets[i] = p.SelectsTarget(t)
		}
	}
	return m
}

// sameObjects returns, for each object of next, the index of the same object (the same
// pointer) in prev, or -1. Both lists are sorted by name with one object of each name, as
// Load leaves them, so one walk finds them all.
func sameObjects[T named](prev, next []T) []int32 {
	at := make([]int32, len(next))
	j := 0
	for i, x := range next {
		at[i] = -1
		name := x.obj().Name
		for j < len(prev) && prev[j].obj() != x.obj() && prev[j].obj().Name < name {
			j++
		}
		if j < len(prev) && prev[j].obj() == x.obj() {
			at[i] = int32(j)
			j++
		}
	}
	return at
}
