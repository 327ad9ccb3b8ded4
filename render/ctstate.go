package render

import (
	"slices"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// clusterTypeState is what an executor works out once per cluster type rather than per
// assignment: the templates of its three roles and the config entries it leaves, and the
// composed config of the last selection of those entries.
type clusterTypeState struct {
	roles   [3]role
	entries []ctEntry // config entries the cluster type does not exclude (see matchForClusterType)
	fixed   bool      // no entry depends on the deployment target: every assignment selects sel
	// sel is the last selection of config entries, composed as composed, known as key.
	sel      []int
	composed *composedConfig
	key      string
}

// role is the template a cluster type names for one of its files, or why it cannot be used.
type role struct {
	tpl *compiledTemplate
	err *scheduling.Error
}

// roleFields are the fields of a cluster type's spec that name its templates, in file order.
var roleFields = [3]string{"spec.reconciler", "spec.namespaceService", "spec.configType"}

// clusterType returns the executor's state of a cluster type, made on first use.
func (x *executor) clusterType(ct *scheduling.ClusterType) *clusterTypeState {
	if x.lastCT == ct {
		return x.lastState
	}
	s, ok := x.byClusterType[ct]
	if !ok {
		s = x.e.newClusterTypeState(ct)
		x.byClusterType[ct] = s
	}
	x.lastCT, x.lastState = ct, s
	return s
}

func (e *Engine) newClusterTypeState(ct *scheduling.ClusterType) *clusterTypeState {
	s := &clusterTypeState{entries: e.config.set.matchForClusterType(ct.Name, ct.Labels), fixed: true}
	for _, entry := range s.entries {
		s.fixed = s.fixed && len(entry.rest) == 0
	}
	names := [3]string{ct.Spec.Reconciler, ct.Spec.NamespaceService, ct.Spec.ConfigType}
	for i, name := range names {
		s.roles[i].tpl, s.roles[i].err = e.template(ct, roleFields[i], name)
	}
	return s
}

// selection returns the config entries that apply to an assignment of the cluster type
// (ConfigSet.Matching), their composed config and its key.
func (x *executor) selection(s *clusterTypeState, dt *scheduling.DeploymentTarget) ([]int, *composedConfig, string) {
	if s.composed != nil && s.fixed {
		return s.sel, s.composed, s.key
	}
	x.sel = matchTarget(s.entries, dt.Name, dt.Labels, x.sel[:0])
	if s.composed == nil || !slices.Equal(x.sel, s.sel) {
		s.sel = append(s.sel[:0], x.sel...)
		s.composed, s.key = x.e.config.compose(s.sel)
	}
	return s.sel, s.composed, s.key
}
