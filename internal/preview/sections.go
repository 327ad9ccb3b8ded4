package preview

import (
	"fmt"
	"strings"

	"github.com/kalypso-gitops/kalypso/internal/plural"
	"github.com/kalypso-gitops/kalypso/render"
)

// Section is the diff of one assignment (or of a cluster type's own files, or of the files
// outside cluster-type folders).
type Section struct {
	Name    string // "clusterType/target", "clusterType" or "other files"
	Summary string // e.g. "1 added, 2 changed"
	Diff    string // the unified diffs of its files, whole files
}

// Sections lists the diff of every group of the plan, in the plan's order. Paths are relative
// to the repository (root/...), as in the trees.
func Sections(plan *render.Plan, prev, next render.Tree, root string) []Section {
	prefix := ""
	if root != "" {
		prefix = root + "/"
	}
	var out []Section
	for _, g := range plan.Groups {
		name := g.ClusterType
		if g.Assignment != "" {
			name += "/" + g.Assignment
		}
		out = append(out, section(name, g.Changes, prefix, prev, next))
	}
	if len(plan.Other) > 0 {
		out = append(out, section("other files", plan.Other, prefix, prev, next))
	}
	return out
}

func section(name string, changes []render.Change, prefix string, prev, next render.Tree) Section {
	var diff strings.Builder
	counts := map[render.ChangeKind]int{}
	for _, c := range changes {
		counts[c.Kind]++
		full := prefix + c.Path
		diff.WriteString(FileDiff(full, prev[full], next[full]))
	}
	var parts []string
	for _, k := range []render.ChangeKind{render.Added, render.Changed, render.Removed} {
		if counts[k] > 0 {
			parts = append(parts, plural.Count(counts[k], "file")+" "+string(k))
		}
	}
	return Section{Name: name, Summary: strings.Join(parts, ", "), Diff: diff.String()}
}

// Plain writes the sections for a terminal: a header line per section, then its diff.
func Plain(sections []Section) string {
	var b strings.Builder
	for _, s := range sections {
		fmt.Fprintf(&b, "### %s (%s)\n%s", s.Name, s.Summary, s.Diff)
	}
	return b.String()
}
