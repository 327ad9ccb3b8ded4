package render

// Matching a config entry's labels against an assignment is split in two: what the cluster
// type decides is worked out once per cluster type (matchForClusterType), what is left is
// checked per deployment target (matchTarget). The result is Matching's, in the same order.

// targetCondition is a selector label a deployment target must still satisfy once the cluster type
// is known: its name (for the deployment-target label) or one of its labels must be value.
type targetCondition struct {
	key, value string
	name       bool // compare with the deployment target's name
}

// ctEntry is a config entry the cluster type does not exclude, and what is left to check.
type ctEntry struct {
	index int
	rest  []targetCondition
}

// matchForClusterType returns the entries a cluster type does not exclude, in order.
func (s *ConfigSet) matchForClusterType(ctName string, ctLabels map[string]string) []ctEntry {
	var out []ctEntry
entries:
	for i, e := range s.entries {
		var rest []targetCondition
		for k, v := range e.labels {
			switch k {
			case LabelFluxName, LabelFluxNamespace, LabelPlatformConfig:
			case LabelClusterType:
				if v != ctName {
					continue entries
				}
			case LabelDeploymentTarget:
				rest = append(rest, targetCondition{key: k, value: v, name: true})
			case LabelWorkload:
				rest = append(rest, targetCondition{key: k, value: v})
			default:
				if v != ctLabels[k] {
					rest = append(rest, targetCondition{key: k, value: v})
				}
			}
		}
		out = append(out, ctEntry{index: i, rest: rest})
	}
	return out
}

// matchTarget appends to sel the entries whose targetCondition labels the deployment target has.
func matchTarget(entries []ctEntry, dtName string, dtLabels map[string]string, sel []int) []int {
next:
	for _, e := range entries {
		for _, r := range e.rest {
			if (r.name && r.value != dtName) || (!r.name && r.value != dtLabels[r.key]) {
				continue next
			}
		}
		sel = append(sel, e.index)
	}
	return sel
}
