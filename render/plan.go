package render

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// ChangeKind says what happens to a file.
type ChangeKind string

// The kinds of change a plan lists.
const (
	Added   ChangeKind = "added"
	Changed ChangeKind = "changed"
	Removed ChangeKind = "removed"
)

// Change is one file that differs between two trees.
type Change struct {
	Path string // relative to the GitOps path
	Kind ChangeKind
}

// Group is the changes of one assignment (or of a cluster type's own files when Assignment is "").
type Group struct {
	ClusterType string
	Assignment  string
	Changes     []Change
}

// Plan is what turns one GitOps tree into another, grouped by cluster type and assignment.
type Plan struct {
	Groups []Group
	Other  []Change // files outside cluster-type folders, e.g. the promoted commit
}

// Diff compares two trees below root.
func Diff(prev, next Tree, root string) *Plan {
	var changes []Change
	for _, p := range next.SortedPaths() {
		if old, ok := prev[p]; !ok {
			changes = append(changes, Change{Path: p, Kind: Added})
		} else if !bytes.Equal(old, next[p]) {
			changes = append(changes, Change{Path: p, Kind: Changed})
		}
	}
	for _, p := range prev.SortedPaths() {
		if _, ok := next[p]; !ok {
			changes = append(changes, Change{Path: p, Kind: Removed})
		}
	}
	return GroupChanges(changes, root)
}

// GroupChanges arranges changes (paths relative to the repository) by cluster type and assignment.
func GroupChanges(changes []Change, root string) *Plan {
	prefix := dirPrefix(root)
	groups := map[[2]string][]Change{}
	plan := &Plan{}
	add := func(p string, kind ChangeKind) {
		rel, ok := strings.CutPrefix(p, prefix)
		if !ok {
			return
		}
		segs := strings.SplitN(rel, "/", 3)
		if len(segs) == 1 || strings.HasPrefix(segs[0], ".") {
			plan.Other = append(plan.Other, Change{Path: rel, Kind: kind})
			return
		}
		key := [2]string{segs[0], ""}
		if len(segs) == 3 {
			key[1] = segs[1]
		}
		groups[key] = append(groups[key], Change{Path: rel, Kind: kind})
	}
	for _, c := range changes {
		add(c.Path, c.Kind)
	}
	for key, changes := range groups {
		sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
		plan.Groups = append(plan.Groups, Group{ClusterType: key[0], Assignment: key[1], Changes: changes})
	}
	sort.Slice(plan.Groups, func(i, j int) bool {
		a, b := plan.Groups[i], plan.Groups[j]
		if a.ClusterType != b.ClusterType {
			return a.ClusterType < b.ClusterType
		}
		return a.Assignment < b.Assignment
	})
	sort.Slice(plan.Other, func(i, j int) bool { return plan.Other[i].Path < plan.Other[j].Path })
	return plan
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool { return len(p.Groups) == 0 && len(p.Other) == 0 }

// Count returns how many files are added, changed and removed.
func (p *Plan) Count() (added, changed, removed int) {
	count := func(cs []Change) {
		for _, c := range cs {
			switch c.Kind {
			case Added:
				added++
			case Changed:
				changed++
			case Removed:
				removed++
			}
		}
	}
	for _, g := range p.Groups {
		count(g.Changes)
	}
	count(p.Other)
	return added, changed, removed
}

// Text renders the plan for people, one cluster type at a time.
func (p *Plan) Text() string {
	if p.Empty() {
		return "No changes.\n"
	}
	var b strings.Builder
	last := ""
	for _, g := range p.Groups {
		if g.ClusterType != last {
			fmt.Fprintf(&b, "cluster type %s\n", g.ClusterType)
			last = g.ClusterType
		}
		if g.Assignment != "" {
			fmt.Fprintf(&b, "  %s\n", g.Assignment)
		}
		for _, c := range g.Changes {
			fmt.Fprintf(&b, "    %-8s %s\n", c.Kind, c.Path)
		}
	}
	if len(p.Other) > 0 {
		b.WriteString("other files\n")
		for _, c := range p.Other {
			fmt.Fprintf(&b, "    %-8s %s\n", c.Kind, c.Path)
		}
	}
	a, c, r := p.Count()
	fmt.Fprintf(&b, "%d to add, %d to change, %d to remove.\n", a, c, r)
	return b.String()
}
