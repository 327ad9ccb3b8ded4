package preview

import (
	"bytes"
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
	before, after := assignments(prev, root), assignments(next, root)
	b := Blast{Assignments: len(before), ClusterTypes: len(clusterTypes(prev, root))}
	for key, files := range after {
		old, ok := before[key]
		switch {
		case !ok:
			b.Added++
		case !sameFiles(old, files, prev, next):
			b.Changed++
		}
	}
	for key := range before {
		if _, ok := after[key]; !ok {
			b.Removed++
		}
	}
	touched := map[string]bool{}
	for _, g := range render.Diff(prev, next, root).Groups {
		touched[g.ClusterType] = true
	}
	b.Touched = len(touched)
	return b
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

// assignments maps "clusterType/target" to the paths of its files.
func assignments(t render.Tree, root string) map[string][]string {
	out := map[string][]string{}
	for p := range t {
		ct, target, ok := split(p, root)
		if ok && target != "" {
			key := ct + "/" + target
			out[key] = append(out[key], p)
		}
	}
	return out
}

func clusterTypes(t render.Tree, root string) map[string]bool {
	out := map[string]bool{}
	for p := range t {
		if ct, _, ok := split(p, root); ok {
			out[ct] = true
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

func sameFiles(old, cur []string, prev, next render.Tree) bool {
	if len(old) != len(cur) {
		return false
	}
	for _, p := range cur {
		o, ok := prev[p]
		if !ok || !bytes.Equal(o, next[p]) {
			return false
		}
	}
	return true
}

// Count is how many assignments of one cluster type a change adds, changes and removes.
type Count struct {
	ClusterType             string
	Added, Changed, Removed int
}

// ByClusterType counts the added, changed and removed assignments of each cluster type that
// has any, sorted by cluster type.
func ByClusterType(prev, next render.Tree, root string) []Count {
	before, after := assignments(prev, root), assignments(next, root)
	counts := map[string]*Count{}
	get := func(key string) *Count {
		ct, _, _ := strings.Cut(key, "/")
		if counts[ct] == nil {
			counts[ct] = &Count{ClusterType: ct}
		}
		return counts[ct]
	}
	for key, files := range after {
		if old, ok := before[key]; !ok {
			get(key).Added++
		} else if !sameFiles(old, files, prev, next) {
			get(key).Changed++
		}
	}
	for key := range before {
		if _, ok := after[key]; !ok {
			get(key).Removed++
		}
	}
	out := make([]Count, 0, len(counts))
	for _, c := range counts {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ClusterType < out[j].ClusterType })
	return out
}

// MeasurePlan measures a change from the paths before it and its plan, reading no content:
// an assignment of the plan is added when it had no file before, removed when it has none
// after, and changed otherwise. after reports whether a path exists after the change.
func MeasurePlan(before []string, plan *render.Plan, root string, after func(path string) bool) Blast {
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
	b := Blast{Assignments: len(had), ClusterTypes: len(types)}
	touched := map[string]bool{}
	for _, g := range plan.Groups {
		touched[g.ClusterType] = true
		if g.Assignment == "" {
			continue
		}
		key := g.ClusterType + "/" + g.Assignment
		remains := false
		for _, c := range g.Changes {
			remains = remains || (c.Kind != render.Removed)
		}
		if !remains {
			remains = stillHas(key, prefix, before, after)
		}
		switch {
		case !had[key]:
			b.Added++
		case !remains:
			b.Removed++
		default:
			b.Changed++
		}
	}
	b.Touched = len(touched)
	return b
}

// stillHas reports whether any file of the assignment key exists after the change.
func stillHas(key, prefix string, before []string, after func(string) bool) bool {
	for _, p := range before {
		if strings.HasPrefix(p, prefix+key+"/") && after(p) {
			return true
		}
	}
	return false
}
