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
		out = append(out, section(groupName(g), g.Changes, prefix, prev, next))
	}
	if len(plan.Other) > 0 {
		out = append(out, section("other files", plan.Other, prefix, prev, next))
	}
	return out
}

func section(name string, changes []render.Change, prefix string, prev, next render.Tree) Section {
	var diff strings.Builder
	for _, c := range changes {
		full := prefix + c.Path
		diff.WriteString(FileDiff(full, prev[full], next[full]))
	}
	return Section{Name: name, Summary: fileCounts(changes), Diff: diff.String()}
}

// fileCounts says how many files of a group are added, changed and removed, e.g. "1 file added, 2 files changed".
func fileCounts(changes []render.Change) string {
	counts := map[render.ChangeKind]int{}
	for _, c := range changes {
		counts[c.Kind]++
	}
	var parts []string
	for _, k := range []render.ChangeKind{render.Added, render.Changed, render.Removed} {
		if counts[k] > 0 {
			parts = append(parts, plural.Count(counts[k], "file")+" "+string(k))
		}
	}
	return strings.Join(parts, ", ")
}

// Names lists the changed assignments of a plan by name with their file counts, and nothing
// of the files' content (what a preview shows an author who may not read them), within budget
// bytes: the names that do not fit are counted.
func Names(plan *render.Plan, budget int) string {
	var b strings.Builder
	groups := plan.Groups
	if len(plan.Other) > 0 {
		groups = append(groups[:len(groups):len(groups)], render.Group{Changes: plan.Other})
	}
	for i, g := range groups {
		line := fmt.Sprintf("- `%s`: %s\n", groupName(g), fileCounts(g.Changes))
		if b.Len()+len(line)+len(" and 99999999 more.\n") > budget {
			fmt.Fprintf(&b, "- … and %d more.\n", len(groups)-i)
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// groupName is "clusterType/target", "clusterType" for a cluster type's own files, or
// "other files" outside cluster-type folders.
func groupName(g render.Group) string {
	switch {
	case g.ClusterType == "":
		return "other files"
	case g.Assignment != "":
		return g.ClusterType + "/" + g.Assignment
	}
	return g.ClusterType
}

// Plain writes the sections for a terminal: a header line per section, then its diff.
func Plain(sections []Section) string {
	var b strings.Builder
	for _, s := range sections {
		fmt.Fprintf(&b, "### %s (%s)\n%s", s.Name, s.Summary, s.Diff)
	}
	return b.String()
}
