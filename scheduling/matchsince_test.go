package scheduling

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func matchFixture(t *testing.T) *Snapshot {
	return fixtureSnapshot(t, policy("p", "", "{matchLabels: {purpose: overridden-by-workload}}", "{}")+
		policy("q", "", "{}", "{matchLabels: {size: large}}")+policy("r", "", "{}", "{matchLabels: {none: here}}"))
}

// shallow returns a copy of snap whose lists may be changed without changing snap's.
func shallow(snap *Snapshot) *Snapshot {
	c := *snap
	c.Targets, c.ClusterTypes, c.Policies = slices.Clone(snap.Targets), slices.Clone(snap.ClusterTypes), slices.Clone(snap.Policies)
	return &c
}

func relabeled[T any](x *T, labels func(*T) *map[string]string, key, value string) *T {
	c := *x
	l := labels(&c)
	*l = maps.Clone(*l)
	if *l == nil {
		*l = map[string]string{}
	}
	(*l)[key] = value
	return &c
}

func targetLabels(t *DeploymentTarget) *map[string]string { return &t.Labels }
func typeLabels(c *ClusterType) *map[string]string        { return &c.Labels }

// TestMatchPoliciesSinceEqualsMatchPolicies: the policies of a later snapshot evaluated from
// an earlier snapshot's evaluation say what MatchPolicies says, whatever changed between them.
func TestMatchPoliciesSinceEqualsMatchPolicies(t *testing.T) {
	prev := matchFixture(t)
	require.Len(t, prev.Targets, 2)
	other := fixtureSnapshot(t, policy("p", "", "{matchLabels: {purpose: prod}}", "{}")+policy("s", "", "{}", "{}"))
	changes := map[string]func(s *Snapshot){
		"nothing":                func(s *Snapshot) {},
		"a target's labels":      func(s *Snapshot) { s.Targets[0] = relabeled(s.Targets[0], targetLabels, "purpose", "prod") },
		"a target added first":   func(s *Snapshot) { s.Targets = slices.Insert(s.Targets, 0, renamed(s.Targets[1], "a-first")) },
		"a target added last":    func(s *Snapshot) { s.Targets = append(s.Targets, renamed(s.Targets[0], "zz-last")) },
		"a target removed":       func(s *Snapshot) { s.Targets = s.Targets[1:] },
		"a cluster type's label": func(s *Snapshot) { s.ClusterTypes[1] = relabeled(s.ClusterTypes[1], typeLabels, "size", "large") },
		"a cluster type removed": func(s *Snapshot) { s.ClusterTypes = slices.Delete(s.ClusterTypes, 0, 1) },
		"a policy's spec":        func(s *Snapshot) { s.Policies[0] = other.Policies[0] },
		"a policy added":         func(s *Snapshot) { s.Policies = append(s.Policies, other.Policies[1]) },
		"a policy removed":       func(s *Snapshot) { s.Policies = s.Policies[1:] },
	}
	for name, change := range changes {
		next := shallow(prev)
		change(next)
		got := MatchPoliciesSince(MatchPolicies(prev), next)
		require.Same(t, next, got.of, name)
		require.Equal(t, MatchPolicies(next).list, got.list, name)
	}
	require.Equal(t, MatchPolicies(prev).list, MatchPoliciesSince(nil, prev).list)
}

func renamed(x *DeploymentTarget, name string) *DeploymentTarget {
	c := *x
	c.Name = name
	return &c
}

// TestMatchPoliciesSinceTakesUnchangedAnswers: what an unchanged policy said of an unchanged
// object is taken from the earlier evaluation, not evaluated again; a changed object, or a
// policy whose spec changed, is evaluated again.
func TestMatchPoliciesSinceTakesUnchangedAnswers(t *testing.T) {
	prev := matchFixture(t)
	earlier := MatchPolicies(prev)
	tampered := &PolicyMatches{of: prev}
	for _, m := range earlier.list { // every answer about a target turned around
		c := *m
		c.targets = slices.Clone(m.targets)
		for i := range c.targets {
			c.targets[i] = !c.targets[i]
		}
		tampered.list = append(tampered.list, &c)
	}
	other := fixtureSnapshot(t, policy("q", "", "{}", "{}"))
	next := shallow(prev)
	next.Targets[0] = relabeled(next.Targets[0], targetLabels, "purpose", "other")
	next.Policies[1] = other.Policies[0] // q, a new spec
	truth := MatchPolicies(next)
	got := MatchPoliciesSince(tampered, next)
	require.Equal(t, "p", got.list[0].name)
	require.Equal(t, truth.list[0].targets[0], got.list[0].targets[0], "a changed target is evaluated again")
	require.Equal(t, tampered.list[0].targets[1], got.list[0].targets[1], "an unchanged target's answer is taken")
	require.NotEqual(t, truth.list[0].targets[1], got.list[0].targets[1])
	require.Equal(t, "q", got.list[1].name)
	require.Equal(t, truth.list[1], got.list[1], "a changed policy is evaluated again")
}
