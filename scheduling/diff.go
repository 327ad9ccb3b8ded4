package scheduling

import (
	"maps"
	"reflect"
	"slices"
	"sort"
)

// Delta is what differs between two snapshots of one environment, object by object. Objects
// are compared by kind, name and content, their position included, so a message about an
// unchanged object is the same in both snapshots. Workloads and registrations reach the
// schedule and the output only through the deployment targets they make, which are compared
// instead (a change of either is listed as the targets it changes).
type Delta struct {
	Environment bool // the environment's name differs
	GitOpsRepo  bool // the GitOpsRepo was added, removed or changed
	BaseRepo    bool // the BaseRepo (the pin of main) was added, removed or changed
	// Changed lists, by kind, the names of the valid objects added, removed or changed:
	// cluster types, deployment targets, policies, templates, ConfigMaps and ConfigSchemas.
	Changed map[string]map[string]bool
	// Broken lists, by kind, the names whose broken definitions differ in content or order.
	Broken map[string]map[string]bool
}

// Has reports whether the valid object of that kind and name was added, removed or changed.
func (d *Delta) Has(kind, name string) bool { return d.Changed[kind][name] }

// HasBroken reports whether the broken definitions of that kind and name differ.
func (d *Delta) HasBroken(kind, name string) bool { return d.Broken[kind][name] }

// Count is how many objects differ, broken definitions and singletons included.
func (d *Delta) Count() int {
	n := 0
	for _, names := range d.Changed {
		n += len(names)
	}
	for _, names := range d.Broken {
		n += len(names)
	}
	for _, b := range []bool{d.Environment, d.GitOpsRepo, d.BaseRepo} {
		if b {
			n++
		}
	}
	return n
}

// Diff compares the snapshot an environment had with the one it has now.
func Diff(prev, next *Snapshot) *Delta {
	d := &Delta{
		Environment: prev.Environment != next.Environment,
		GitOpsRepo:  !sameOptional(prev.GitOpsRepo, next.GitOpsRepo, sameGitOpsRepo),
		BaseRepo:    !sameOptional(prev.BaseRepo, next.BaseRepo, sameBaseRepo),
		Changed:     map[string]map[string]bool{},
	}
	d.add(KindClusterType, diffNamed(prev.ClusterTypes, next.ClusterTypes, sameClusterType))
	d.add(KindDeploymentTarget, diffNamed(prev.Targets, next.Targets, sameTarget))
	d.add(KindSchedulingPolicy, diffNamed(prev.Policies, next.Policies, samePolicy))
	d.add(KindConfigMap, diffNamed(prev.ConfigMaps, next.ConfigMaps, sameConfigMap))
	d.add(KindConfigSchema, diffNamed(prev.ConfigSchemas, next.ConfigSchemas, sameConfigSchema))
	d.add(KindTemplate, diffNamed(templateList(prev), templateList(next), sameTemplate))
	d.Broken = diffBroken(prev.Broken, next.Broken)
	return d
}

func (d *Delta) add(kind string, names map[string]bool) {
	if len(names) > 0 {
		d.Changed[kind] = names
	}
}

func templateList(s *Snapshot) []*Template {
	out := make([]*Template, 0, len(s.Templates))
	for _, t := range s.Templates {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// diffNamed returns the names present in one list only, or in both with different content.
// Names are unique in each list.
func diffNamed[T named](prev, next []T, same func(a, b T) bool) map[string]bool {
	old := make(map[string]T, len(prev))
	for _, x := range prev {
		old[x.obj().Name] = x
	}
	out := map[string]bool{}
	for _, x := range next {
		name := x.obj().Name
		if o, ok := old[name]; !ok || !same(o, x) {
			out[name] = true
		}
		delete(old, name)
	}
	for name := range old {
		out[name] = true
	}
	return out
}

// diffBroken lists, by kind, the names whose broken objects differ (in number, content or
// order); when the relative order of the remaining broken objects of a kind differs, every
// name of that kind is listed, as the first broken object that matches can decide a message.
func diffBroken(prev, next []*Object) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	old, cur := groupBroken(prev), groupBroken(next)
	for kind := range union(old, cur) {
		names := map[string]bool{}
		for name := range union(old[kind], cur[kind]) {
			if !slices.EqualFunc(old[kind][name], cur[kind][name], sameObject) {
				names[name] = true
			}
		}
		if !sameOrder(prev, next, kind, names) {
			for name := range union(old[kind], cur[kind]) {
				names[name] = true
			}
		}
		if len(names) > 0 {
			out[kind] = names
		}
	}
	return out
}

func groupBroken(list []*Object) map[string]map[string][]*Object {
	out := map[string]map[string][]*Object{}
	for _, o := range list {
		if out[o.Kind] == nil {
			out[o.Kind] = map[string][]*Object{}
		}
		out[o.Kind][o.Name] = append(out[o.Kind][o.Name], o)
	}
	return out
}

// sameOrder compares the sequences of broken objects of a kind, leaving out the names listed.
func sameOrder(prev, next []*Object, kind string, skip map[string]bool) bool {
	keep := func(list []*Object) []*Object {
		var out []*Object
		for _, o := range list {
			if o.Kind == kind && !skip[o.Name] {
				out = append(out, o)
			}
		}
		return out
	}
	return slices.EqualFunc(keep(prev), keep(next), sameObject)
}

func union[V any](a, b map[string]V) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func sameOptional[T any](a, b *T, same func(a, b *T) bool) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return same(a, b)
}

// sameObject compares what every object has: kind, name, labels, position and field lines.
func sameObject(a, b *Object) bool {
	return a.Kind == b.Kind && a.Name == b.Name && a.Pos == b.Pos && a.Unknown == b.Unknown &&
		sameStrings(a.Labels, b.Labels) && maps.Equal(a.lines, b.lines)
}

// sameStrings compares two maps, a nil map differing from an empty one.
func sameStrings(a, b map[string]string) bool {
	return (a == nil) == (b == nil) && maps.Equal(a, b)
}

// sameList compares two lists, a nil list differing from an empty one.
func sameList[T comparable](a, b []T) bool {
	return (a == nil) == (b == nil) && slices.Equal(a, b)
}

func sameGitOpsRepo(a, b *GitOpsRepo) bool {
	return sameObject(&a.Object, &b.Object) && a.Spec == b.Spec
}

func sameBaseRepo(a, b *BaseRepo) bool { return sameObject(&a.Object, &b.Object) && a.Spec == b.Spec }

func sameClusterType(a, b *ClusterType) bool {
	return sameObject(&a.Object, &b.Object) && a.Spec == b.Spec
}

func sameTarget(a, b *DeploymentTarget) bool {
	return sameObject(&a.Object, &b.Object) && a.Workload == b.Workload && a.Workspace == b.Workspace &&
		a.Environment == b.Environment && sameStrings(a.Manifests, b.Manifests) && sameList(a.ConfigSchemas, b.ConfigSchemas)
}

func samePolicy(a, b *SchedulingPolicy) bool {
	return sameObject(&a.Object, &b.Object) && reflect.DeepEqual(a.Spec, b.Spec)
}

func sameConfigMap(a, b *ConfigMap) bool {
	return sameObject(&a.Object, &b.Object) && sameStrings(a.Data, b.Data)
}

func sameConfigSchema(a, b *ConfigSchema) bool {
	return sameObject(&a.Object, &b.Object) && a.Spec == b.Spec
}

func sameTemplate(a, b *Template) bool {
	return sameObject(&a.Object, &b.Object) && a.Spec.Type == b.Spec.Type &&
		a.Spec.ContentType == b.Spec.ContentType && sameList(a.Spec.Manifests, b.Spec.Manifests)
}
