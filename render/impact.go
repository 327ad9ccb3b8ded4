package render

import (
	"maps"
	"sort"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// impact is what a delta changes in the output of assignments that exist before and after it:
// an assignment is rendered again when its cluster type or one of the cluster type's templates
// changed, when its deployment target changed, or when a changed platform config or schema
// matches it by labels, before or after the change. Policies decide which assignments exist,
// never what an assignment renders to. Positions only appear in the messages of failed
// assignments, so when objects only moved, the assignments that failed are rendered again.
type impact struct {
	clusterTypes map[string]bool     // every assignment of these cluster types
	targets      []string            // every assignment of these deployment targets, sorted
	labelSets    []map[string]string // every assignment these labels match (LabelsMatch)
	failed       bool                // every assignment that failed: an object it may cite moved
	all          bool                // every assignment
}

// newImpact reads a delta between two snapshots as sets of assignments to render again.
func newImpact(d *scheduling.Delta, prev, next *scheduling.Snapshot) *impact {
	imp := &impact{clusterTypes: maps.Clone(d.Changed[scheduling.KindClusterType]), failed: len(d.Moved) > 0}
	if imp.clusterTypes == nil {
		imp.clusterTypes = map[string]bool{}
	}
	for name := range d.Changed[scheduling.KindDeploymentTarget] {
		imp.targets = append(imp.targets, name)
	}
	sort.Strings(imp.targets)
	imp.addTemplates(d, next)
	for _, s := range []*scheduling.Snapshot{prev, next} {
		imp.addConfigMaps(d, s)
		imp.addSchemas(d, s)
	}
	return imp
}

// addTemplates marks the cluster types that use a template whose definitions changed.
func (imp *impact) addTemplates(d *scheduling.Delta, next *scheduling.Snapshot) {
	changed := func(name string) bool {
		return d.Has(scheduling.KindTemplate, name) || d.HasBroken(scheduling.KindTemplate, name)
	}
	for _, ct := range next.ClusterTypes {
		s := ct.Spec
		if changed(s.Reconciler) || changed(s.NamespaceService) || changed(s.ConfigType) {
			imp.clusterTypes[ct.Name] = true
		}
	}
}

// addConfigMaps adds the labels of the changed platform config of one snapshot: a ConfigMap's
// labels, or those of every key of an azure-app-config map; an unreadable one matches all.
func (imp *impact) addConfigMaps(d *scheduling.Delta, s *scheduling.Snapshot) {
	for _, cm := range s.ConfigMaps {
		if d.Has(scheduling.KindConfigMap, cm.Name) {
			imp.addConfigSource(cm.Name, cm.Labels, cm.Data)
		}
	}
	for _, b := range s.Broken {
		if b.Kind != scheduling.KindConfigMap || !d.HasBroken(b.Kind, b.Name) {
			continue
		}
		p, az := isPlatformConfig(b.Name, b.Labels)
		switch {
		case b.Unknown || az:
			imp.all = true
		case p:
			imp.addLabels(b.Labels)
		}
	}
}

func (imp *impact) addConfigSource(name string, labels, data map[string]string) {
	p, az := isPlatformConfig(name, labels)
	if p {
		imp.addLabels(labels)
	}
	if az {
		for key := range data {
			keyLabels, _ := ParseAzureKey(key)
			imp.addLabels(keyLabels)
		}
	}
}

// addSchemas adds the labels of the changed ConfigSchemas of one snapshot, valid or broken.
func (imp *impact) addSchemas(d *scheduling.Delta, s *scheduling.Snapshot) {
	for _, cs := range s.ConfigSchemas {
		if d.Has(scheduling.KindConfigSchema, cs.Name) {
			imp.addLabels(cs.Labels)
		}
	}
	for _, b := range s.Broken {
		if b.Kind == scheduling.KindConfigSchema && d.HasBroken(b.Kind, b.Name) {
			imp.addLabels(b.Labels)
		}
	}
}

// addLabels adds a label set; one that constrains nothing matches every assignment.
func (imp *impact) addLabels(labels map[string]string) {
	for k := range labels {
		if !ignoredLabel(k) {
			imp.labelSets = append(imp.labelSets, labels)
			return
		}
	}
	imp.all = true
}

func ignoredLabel(k string) bool {
	return k == LabelFluxName || k == LabelFluxNamespace || k == LabelPlatformConfig
}

// dirty returns the assignments of a schedule to render again: the fresh ones that are new
// pairs and those the impact covers; prev is the result the schedule was made from.
func (imp *impact) dirty(s *scheduling.Rescheduled, next *scheduling.Snapshot, prev *Result) []*scheduling.Assignment {
	mark := make([]bool, len(s.Assignments))
	for ci, ct := range next.ClusterTypes {
		imp.markRow(ct, s.Rows[ci], s.Assignments[s.Rows[ci]:s.Rows[ci+1]], mark)
	}
	for _, i := range s.Fresh {
		if !mark[i] && !prev.had(s.Assignments[i].Key()) { // a marked one is rendered anyway
			mark[i] = true
		}
	}
	if imp.failed {
		for key := range prev.Failed {
			if i, ok := indexOf(next, s, key); ok {
				mark[i] = true
			}
		}
	}
	var out []*scheduling.Assignment
	for i, m := range mark {
		if m {
			out = append(out, s.Assignments[i])
		}
	}
	return out
}

// markRow marks the assignments of one cluster type (row starts at index base) that the impact covers.
func (imp *impact) markRow(ct *scheduling.ClusterType, base int, row []*scheduling.Assignment, mark []bool) {
	if len(row) == 0 {
		return
	}
	var residuals []map[string]string
	whole := imp.clusterTypes[ct.Name]
	for _, labels := range imp.labelSets {
		res, possible := residual(labels, ct)
		switch {
		case !possible:
		case len(res) == 0:
			whole = true
		default:
			residuals = append(residuals, res)
		}
	}
	if whole {
		for i := range row {
			mark[base+i] = true
		}
		return
	}
	j := 0
	for _, name := range imp.targets { // sorted, as the row
		if j = scheduling.SearchRow(row, j, name); j < len(row) && row[j].Target.Name == name {
			mark[base+j] = true
			j++
		}
	}
	if len(residuals) > 0 {
		for i, a := range row {
			if matchesAny(residuals, a.Target) {
				mark[base+i] = true
			}
		}
	}
}

// findTarget finds the assignment of a deployment target in a row sorted by target name.
func findTarget(row []*scheduling.Assignment, name string) (int, bool) {
	i := scheduling.SearchRow(row, 0, name)
	return i, i < len(row) && row[i].Target.Name == name
}

// residual is what labels still require of a deployment target once matched against cluster
// type ct, as LabelsMatch decides; possible is false when ct alone rules the labels out.
func residual(labels map[string]string, ct *scheduling.ClusterType) (res map[string]string, possible bool) {
	for k, v := range labels {
		switch {
		case ignoredLabel(k):
		case k == LabelClusterType:
			if v != ct.Name {
				return nil, false
			}
		case k == LabelDeploymentTarget || k == LabelWorkload || v != ct.Labels[k]:
			if res == nil {
				res = map[string]string{}
			}
			res[k] = v
		}
	}
	return res, true
}

// matchesAny reports whether a deployment target satisfies one of the residual label sets.
func matchesAny(residuals []map[string]string, dt *scheduling.DeploymentTarget) bool {
	for _, res := range residuals {
		if targetMatches(res, dt) {
			return true
		}
	}
	return false
}

func targetMatches(res map[string]string, dt *scheduling.DeploymentTarget) bool {
	for k, v := range res {
		switch k {
		case LabelDeploymentTarget:
			if v != dt.Name {
				return false
			}
		default: // workload, and any other label: the target's own label, "" when missing
			if v != dt.Labels[k] {
				return false
			}
		}
	}
	return true
}
