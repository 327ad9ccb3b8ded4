package scheduling

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Assignment places one deployment target on one cluster type.
type Assignment struct {
	ClusterType *ClusterType
	Target      *DeploymentTarget
	Policies    []string // the policies that select it, sorted
}

// Key identifies the assignment: `<clusterType>/<deploymentTarget>`, its folder in the GitOps repo.
func (a *Assignment) Key() string { return a.ClusterType.Name + "/" + a.Target.Name }

// Namespace is the target namespace: `<environment>-<clusterType>-<deploymentTarget>`.
func (a *Assignment) Namespace() string {
	return a.Target.Environment + "-" + a.ClusterType.Name + "-" + a.Target.Name
}

// Name is the reference's Assignment name: `<workload>-<deploymentTarget>-<clusterType>`.
func (a *Assignment) Name() string {
	return a.Target.Workload + "-" + a.Target.Name + "-" + a.ClusterType.Name
}

// compiled selectors of a policy.
type policySelectors struct {
	targets, clusterTypes labels.Selector
}

// selectorOf converts a label selector as metav1.LabelSelectorAsSelector does: matchLabels and
// matchExpressions ANDed, an empty selector matching everything.
func selectorOf(s LabelSelector) (labels.Selector, error) {
	if len(s.MatchLabels)+len(s.MatchExpressions) == 0 {
		return labels.Everything(), nil
	}
	sel := labels.NewSelector()
	for _, k := range slices.Sorted(maps.Keys(s.MatchLabels)) {
		r, err := labels.NewRequirement(k, selection.Equals, []string{s.MatchLabels[k]})
		if err != nil {
			return nil, err
		}
		sel = sel.Add(*r)
	}
	for i, e := range s.MatchExpressions {
		op, ok := selectorOperators[e.Operator]
		if !ok {
			return nil, &exprError{index: i, field: "operator", err: fmt.Errorf("%q is not a valid label selector operator (want In, NotIn, Exists or DoesNotExist)", e.Operator)}
		}
		r, err := labels.NewRequirement(e.Key, op, append([]string(nil), e.Values...))
		if err != nil {
			return nil, &exprError{index: i, field: "key", err: err}
		}
		sel = sel.Add(*r)
	}
	return sel, nil
}

// exprError locates a problem in one of a selector's matchExpressions.
type exprError struct {
	index int
	field string
	err   error
}

func (e *exprError) Error() string { return e.err.Error() }

// selectorError reports a selector problem at the line of the expression it is about.
func selectorError(p *SchedulingPolicy, path string, err error, errs *Errors) {
	field := path + ".labelSelector"
	var ee *exprError
	if errors.As(err, &ee) {
		field = fmt.Sprintf("%s.matchExpressions[%d].%s", field, ee.index, ee.field)
	}
	errs.Add(p.At(field), p.Ref(), "%s: %v", path, err)
}

var selectorOperators = map[string]selection.Operator{
	"In": selection.In, "NotIn": selection.NotIn, "Exists": selection.Exists, "DoesNotExist": selection.DoesNotExist,
}

// validatePolicies compiles every policy's selectors; a policy whose selector is invalid is broken.
func validatePolicies(snap *Snapshot) {
	var valid []*SchedulingPolicy
	for _, p := range snap.Policies {
		if compilePolicy(p, &snap.Errors) {
			valid = append(valid, p)
		} else {
			snap.Broken = append(snap.Broken, &p.Object)
		}
	}
	snap.Policies = valid
}

func compilePolicy(p *SchedulingPolicy, errs *Errors) bool {
	ok := true
	var sel policySelectors
	var err error
	if sel.targets, err = selectorOf(p.Spec.DeploymentTargetSelector.LabelSelector); err != nil {
		selectorError(p, "spec.deploymentTargetSelector", err, errs)
		ok = false
	}
	if sel.clusterTypes, err = selectorOf(p.Spec.ClusterTypeSelector.LabelSelector); err != nil {
		selectorError(p, "spec.clusterTypeSelector", err, errs)
		ok = false
	}
	p.selectors = &sel
	return ok
}

// Selects reports whether the policy assigns target t to cluster type c.
func (p *SchedulingPolicy) Selects(c *ClusterType, t *DeploymentTarget) bool {
	return p.SelectsTarget(t) && p.SelectsClusterType(c)
}

// SelectsTarget reports whether the policy's deployment-target selector matches t.
func (p *SchedulingPolicy) SelectsTarget(t *DeploymentTarget) bool {
	ws := p.Spec.DeploymentTargetSelector.Workspace
	if ws != "" && t.Labels["workspace"] != ws {
		return false
	}
	return p.mustSelectors().targets.Matches(labels.Set(t.Labels))
}

// SelectsClusterType reports whether the policy's cluster-type selector matches c.
func (p *SchedulingPolicy) SelectsClusterType(c *ClusterType) bool {
	return p.mustSelectors().clusterTypes.Matches(labels.Set(c.Labels))
}

func (p *SchedulingPolicy) mustSelectors() *policySelectors {
	if p.selectors == nil {
		var errs Errors
		if !compilePolicy(p, &errs) {
			panic(fmt.Sprintf("scheduling: policy %s used with invalid selectors: %v", p.Name, errs))
		}
	}
	return p.selectors
}

// Schedule computes every assignment of the snapshot, de-duplicated across overlapping
// policies, sorted by cluster type and deployment target: the snapshot's order, as Load sorts
// both by name and keeps one of each name.
func Schedule(snap *Snapshot) []*Assignment {
	list, _ := MatchPolicies(snap).Schedule()
	return list
}

// Schedule is Schedule of the snapshot whose policies m evaluated, taking them from m, with
// where the assignments of each cluster type start, as Rescheduled.Rows gives them.
func (m *PolicyMatches) Schedule() (list []*Assignment, rows []int) {
	snap := m.of
	var out []*Assignment
	var selecting []*policyMatch
	rows = make([]int, 0, len(snap.ClusterTypes)+1)
	for ci, c := range snap.ClusterTypes {
		rows = append(rows, len(out))
		selecting = selecting[:0]
		for _, pm := range m.list {
			if pm.clusterTypes[ci] {
				selecting = append(selecting, pm)
			}
		}
		out = appendAssignments(out, c, snap.Targets, selecting)
	}
	return out, append(rows, len(out))
}

// policyMatch is what one policy selects, by index into the snapshot's cluster types and targets.
type policyMatch struct {
	name                  string
	clusterTypes, targets []bool
}

// matchPolicies evaluates every policy's selectors once, leaving out policies that select no
// cluster type; the result is sorted by policy name.
func matchPolicies(snap *Snapshot) []*policyMatch {
	var out []*policyMatch
	for _, p := range snap.Policies {
		if m := matchSince(p, nil, snap, nil, nil); m != nil {
			out = append(out, m)
		}
	}
	sortMatches(out)
	return out
}

// sortMatches sorts evaluated policies by name.
func sortMatches(list []*policyMatch) {
	sort.SliceStable(list, func(i, j int) bool { return list[i].name < list[j].name })
}

// appendAssignments appends an assignment of c for every target one of the policies selects.
func appendAssignments(out []*Assignment, c *ClusterType, targets []*DeploymentTarget, policies []*policyMatch) []*Assignment {
	if len(policies) == 0 {
		return out
	}
	for ti, t := range targets {
		var names []string
		for _, m := range policies {
			if m.targets[ti] {
				names = append(names, m.name)
			}
		}
		if names != nil {
			out = append(out, &Assignment{ClusterType: c, Target: t, Policies: names})
		}
	}
	return out
}
