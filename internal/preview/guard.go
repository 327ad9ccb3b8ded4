package preview

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Blast is the size of a change to one environment, counted in assignments (a deployment
// target's folder in a cluster type) and cluster types.
type Blast struct {
	Assignments  int // assignments before the change (the base of percentages)
	Added        int
	Changed      int
	Removed      int
	ClusterTypes int // cluster types before the change
	Touched      int // cluster types with any added, changed or removed file
}

// Measure compares two GitOps trees below root.
func Measure(prev, next render.Tree, root string) Blast {
	return MeasurePlan(prev.SortedPaths(), render.Diff(prev, next, root), root, has(next))
}

// has reports whether a path is in a tree.
func has(t render.Tree) func(string) bool {
	return func(p string) bool { _, ok := t[p]; return ok }
}

// Violation is one limit a change exceeds.
type Violation struct {
	What     string // "removed", "changed", "added" or "cluster types"
	Measured int
	Total    int
	Limit    scheduling.Limit
}

// String says the measured figure against the limit, e.g.
// "removes 30 of 100 assignments (30%), more than maxRemoved 10%".
func (v Violation) String() string {
	unit, field := "assignments", map[string]string{"added": "maxAdded", "changed": "maxChanged", "removed": "maxRemoved", "cluster types": "maxClusterTypes"}[v.What]
	verb := map[string]string{"added": "adds", "changed": "changes", "removed": "removes", "cluster types": "touches"}[v.What]
	if v.What == "cluster types" {
		unit = "cluster types"
	}
	return fmt.Sprintf("%s %d of %d %s (%s), more than %s %s", verb, v.Measured, v.Total, unit, percent(v.Measured, v.Total), field, v.Limit)
}

func percent(n, total int) string {
	if total == 0 {
		return "new environment"
	}
	return fmt.Sprintf("%.1f%%", float64(n)*100/float64(total))
}

// Check returns the limits the change exceeds, in a fixed order; none without a guard.
func Check(l *scheduling.Limits, b Blast) []Violation {
	if l.Empty() {
		return nil
	}
	var out []Violation
	for _, c := range []struct {
		what            string
		limit           *scheduling.Limit
		measured, total int
	}{
		{"removed", l.Removed, b.Removed, b.Assignments},
		{"changed", l.Changed, b.Changed, b.Assignments},
		{"added", l.Added, b.Added, b.Assignments},
		{"cluster types", l.ClusterTypes, b.Touched, b.ClusterTypes},
	} {
		if c.limit != nil && !c.limit.Allows(c.measured, c.total) {
			out = append(out, Violation{What: c.what, Measured: c.measured, Total: c.total, Limit: *c.limit})
		}
	}
	return out
}

// split finds the cluster type and assignment of a path; ok is false outside cluster-type folders.
func split(p, root string) (ct, target string, ok bool) {
	rel := p
	if root != "" {
		if rel, ok = strings.CutPrefix(p, root+"/"); !ok {
			return "", "", false
		}
	}
	segs := strings.SplitN(rel, "/", 3)
	if len(segs) == 1 || strings.HasPrefix(segs[0], ".") {
		return "", "", false
	}
	if len(segs) == 3 {
		return segs[0], segs[1], true
	}
	return segs[0], "", true
}

// Count is how many assignments of one cluster type a change adds, changes and removes.
type Count struct {
	ClusterType             string
	Added, Changed, Removed int
}

// ByClusterType counts the added, changed and removed assignments of each cluster type that
// has any, sorted by cluster type.
func ByClusterType(prev, next render.Tree, root string) []Count {
	counts := map[string]*Count{}
	c := classify(prev.SortedPaths(), render.Diff(prev, next, root), root, has(next))
	for _, a := range c.assignments {
		n := counts[a.clusterType]
		if n == nil {
			n = &Count{ClusterType: a.clusterType}
			counts[a.clusterType] = n
		}
		switch a.kind {
		case render.Added:
			n.Added++
		case render.Removed:
			n.Removed++
		default:
			n.Changed++
		}
	}
	out := make([]Count, 0, len(counts))
	for _, n := range counts {
		out = append(out, *n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ClusterType < out[j].ClusterType })
	return out
}

// MeasurePlan measures a change from the paths before it and its plan, reading no content:
// an assignment of the plan is added when it had no file before, removed when it has none
// after, and changed otherwise. after reports whether a path exists after the change.
func MeasurePlan(before []string, plan *render.Plan, root string, after func(path string) bool) Blast {
	c := classify(before, plan, root, after)
	b := Blast{Assignments: c.had, ClusterTypes: c.types, Touched: c.touched}
	for _, a := range c.assignments {
		switch a.kind {
		case render.Added:
			b.Added++
		case render.Removed:
			b.Removed++
		default:
			b.Changed++
		}
	}
	return b
}

// classified is a plan seen assignment by assignment.
type classified struct {
	had, types, touched int // assignments and cluster types before; cluster types the plan touches
	assignments         []assignmentChange
}

// assignmentChange is what a plan does to one assignment.
type assignmentChange struct {
	clusterType string
	kind        render.ChangeKind
}

// classify decides for each assignment of a plan whether it is added, changed or removed.
func classify(before []string, plan *render.Plan, root string, after func(path string) bool) classified {
	prefix := ""
	if root != "" {
		prefix = root + "/"
	}
	had, types := map[string]bool{}, map[string]bool{}
	for _, p := range before {
		if ct, target, ok := split(p, root); ok {
			types[ct] = true
			if target != "" {
				had[ct+"/"+target] = true
			}
		}
	}
	c := classified{had: len(had), types: len(types)}
	touched := map[string]bool{}
	for _, g := range plan.Groups {
		touched[g.ClusterType] = true
		if g.Assignment == "" {
			continue
		}
		key := g.ClusterType + "/" + g.Assignment
		kind := render.Changed
		switch {
		case !had[key]:
			kind = render.Added
		case !remains(g, key, prefix, before, after):
			kind = render.Removed
		}
		c.assignments = append(c.assignments, assignmentChange{clusterType: g.ClusterType, kind: kind})
	}
	c.touched = len(touched)
	return c
}

// remains reports whether an assignment still has a file after the change: one the plan adds
// or changes, or one it leaves alone.
func remains(g render.Group, key, prefix string, before []string, after func(string) bool) bool {
	for _, ch := range g.Changes {
		if ch.Kind != render.Removed {
			return true
		}
	}
	for _, p := range before {
		if strings.HasPrefix(p, prefix+key+"/") && after(p) {
			return true
		}
	}
	return false
}
