package gitops

import (
	"slices"
	"strings"

	"github.com/kalypso-gitops/kalypso/render"
)

// ctGroups are the groups of changes of one cluster type's folder, in render.GroupChanges's
// order.
type ctGroups struct {
	ct     string
	groups []render.Group
}

// plan groups the proposal's changes as render.GroupChanges does, from the groups each
// cluster type's folder made (kept with its memo) and the few changes outside them: its cost
// follows the number of groups, without grouping or sorting every changed file again.
func (p *proposer) plan() *render.Plan {
	rest := render.GroupChanges(p.other, p.res.Root)
	blocks := slices.Clone(p.blocks)
	for i := 0; i < len(rest.Groups); {
		j := i
		for j < len(rest.Groups) && rest.Groups[j].ClusterType == rest.Groups[i].ClusterType {
			j++
		}
		blocks = append(blocks, ctGroups{rest.Groups[i].ClusterType, rest.Groups[i:j]})
		i = j
	}
	slices.SortFunc(blocks, func(a, b ctGroups) int { return strings.Compare(a.ct, b.ct) })
	n := 0
	for i, b := range blocks {
		if i > 0 && blocks[i-1].ct == b.ct { // one folder's changes in two places: group them all
			return render.GroupChanges(p.out.Changes(), p.res.Root)
		}
		n += len(b.groups)
	}
	out := &render.Plan{Other: rest.Other}
	if n > 0 {
		out.Groups = make([]render.Group, 0, n)
	}
	for _, b := range blocks {
		out.Groups = append(out.Groups, b.groups...)
	}
	return out
}
