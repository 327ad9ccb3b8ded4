package scheduling

// policyChange is how the selection of one changed policy moved between two snapshots.
type policyChange struct {
	prev, next *SchedulingPolicy // nil where the policy is absent or invalid
	flipped    []string          // the targets it selects in one snapshot only, sorted by name
}

// selects reports whether the policy selects c before and after the change; c must be the
// same in both snapshots.
func (pc *policyChange) selects(c *ClusterType) (before, after bool) {
	return pc.prev != nil && pc.prev.SelectsClusterType(c), pc.next != nil && pc.next.SelectsClusterType(c)
}

// policyChanges evaluates every policy the delta lists against the targets of both snapshots.
func policyChanges(prev, next *Snapshot, d *Delta) []*policyChange {
	var out []*policyChange
	for _, name := range sortedNames(d.Changed[KindSchedulingPolicy]) {
		pc := &policyChange{prev: findPolicy(prev.Policies, name), next: findPolicy(next.Policies, name)}
		pc.flipped = flippedTargets(pc, prev.Targets, next.Targets)
		out = append(out, pc)
	}
	return out
}

func findPolicy(list []*SchedulingPolicy, name string) *SchedulingPolicy {
	for _, p := range list {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// flippedTargets walks both snapshots' targets, sorted by name, and returns the names the
// policy selects on one side only.
func flippedTargets(pc *policyChange, before, after []*DeploymentTarget) []string {
	var out []string
	i, j := 0, 0
	for i < len(before) || j < len(after) {
		var a, b *DeploymentTarget
		switch {
		case j == len(after) || i < len(before) && before[i].Name < after[j].Name:
			a = before[i]
			i++
		case i == len(before) || after[j].Name < before[i].Name:
			b = after[j]
			j++
		default:
			a, b = before[i], after[j]
			i++
			j++
		}
		if selectsTarget(pc.prev, a) != selectsTarget(pc.next, b) {
			if a != nil {
				out = append(out, a.Name)
			} else {
				out = append(out, b.Name)
			}
		}
	}
	return out
}

func selectsTarget(p *SchedulingPolicy, t *DeploymentTarget) bool {
	return p != nil && t != nil && p.SelectsTarget(t)
}
