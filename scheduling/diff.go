package scheduling

import (
	"slices"
	"sort"
)

// Delta is what differs between two snapshots of one environment, object by object, by kind
// and name. An object whose content is the same but whose position differs (its file, its
// line, or the lines of its fields) is moved, not changed: positions only appear in messages.
// Workloads and registrations reach the schedule and the output only through the deployment
// targets they make, which are compared instead (a change of either is listed as the targets
// it changes).
type Delta struct {
	Environment bool // the environment's name differs
	GitOpsRepo  bool // the GitOpsRepo was added or removed, or its content changed
	BaseRepo    bool // the BaseRepo (the pin of main) was added, removed, changed or moved
	// Changed lists, by kind, the names of the valid objects added, removed or changed:
	// cluster types, deployment targets, policies, templates, ConfigMaps and ConfigSchemas.
	Changed map[string]map[string]bool
	// Moved lists, by kind, the names of the valid objects only moved.
	Moved map[string]map[string]bool
	// Broken lists, by kind, the names whose broken definitions differ in content, position
	// or order.
	Broken map[string]map[string]bool
}

// Has reports whether the valid object of that kind and name was added, removed or changed.
func (d *Delta) Has(kind, name string) bool { return d.Changed[kind][name] }

// HasMoved reports whether the valid object of that kind and name only moved.
func (d *Delta) HasMoved(kind, name string) bool { return d.Moved[kind][name] }

// HasBroken reports whether the broken definitions of that kind and name differ.
func (d *Delta) HasBroken(kind, name string) bool { return d.Broken[kind][name] }

// Same reports whether the valid object of that kind and name is the same in both snapshots,
// position included.
func (d *Delta) Same(kind, name string) bool { return !d.Has(kind, name) && !d.HasMoved(kind, name) }

// Count is how many objects differ, moved and broken ones and singletons included.
func (d *Delta) Count() int {
	n := 0
	for _, list := range []map[string]map[string]bool{d.Changed, d.Moved, d.Broken} {
		for _, names := range list {
			n += len(names)
		}
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
		Moved:       map[string]map[string]bool{},
	}
	d.add(KindClusterType)(diffNamed(prev.ClusterTypes, next.ClusterTypes, sameClusterType, sameObjectPlace))
	d.add(KindDeploymentTarget)(diffNamed(prev.Targets, next.Targets, sameTarget, sameObjectPlace))
	d.add(KindSchedulingPolicy)(diffNamed(prev.Policies, next.Policies, samePolicy, sameObjectPlace))
	d.add(KindConfigMap)(diffNamed(prev.ConfigMaps, next.ConfigMaps, sameConfigMap, sameObjectPlace))
	d.add(KindConfigSchema)(diffNamed(prev.ConfigSchemas, next.ConfigSchemas, sameConfigSchema, sameSchemaPlace))
	d.add(KindTemplate)(diffNamed(templateList(prev), templateList(next), sameTemplate, sameTemplatePlace))
	d.Broken = diffBroken(prev.Broken, next.Broken)
	return d
}

func (d *Delta) add(kind string) func(changed, moved map[string]bool) {
	return func(changed, moved map[string]bool) {
		if len(changed) > 0 {
			d.Changed[kind] = changed
		}
		if len(moved) > 0 {
			d.Moved[kind] = moved
		}
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

// diffNamed returns the names present in one list only or whose content differs (changed),
// and those whose content is the same but whose position differs (moved). Names are unique.
func diffNamed[T named](prev, next []T, same, samePlace func(a, b T) bool) (changed, moved map[string]bool) {
	if strictlySorted(prev) && strictlySorted(next) {
		return diffSorted(prev, next, same, samePlace)
	}
	old := make(map[string]T, len(prev))
	for _, x := range prev {
		old[x.obj().Name] = x
	}
	changed, moved = map[string]bool{}, map[string]bool{}
	for _, x := range next {
		name := x.obj().Name
		o, ok := old[name]
		switch {
		case ok && o.obj() == x.obj(): // the same object, shared by both snapshots
		case !ok || !same(o, x):
			changed[name] = true
		case !samePlace(o, x):
			moved[name] = true
		}
		delete(old, name)
	}
	for name := range old {
		changed[name] = true
	}
	return changed, moved
}

// strictlySorted tells whether the names of list are sorted, each one once.
func strictlySorted[T named](list []T) bool {
	for i := 1; i < len(list); i++ {
		if list[i-1].obj().Name >= list[i].obj().Name {
			return false
		}
	}
	return true
}

// diffSorted is diffNamed of two lists sorted by name, each name once: walked side by side.
func diffSorted[T named](prev, next []T, same, samePlace func(a, b T) bool) (changed, moved map[string]bool) {
	changed, moved = map[string]bool{}, map[string]bool{}
	i, j := 0, 0
	for i < len(prev) || j < len(next) {
		switch {
		case j == len(next) || (i < len(prev) && prev[i].obj().Name < next[j].obj().Name):
			changed[prev[i].obj().Name] = true
			i++
		case i == len(prev) || next[j].obj().Name < prev[i].obj().Name:
			changed[next[j].obj().Name] = true
			j++
		default:
			o, x := prev[i], next[j]
			switch {
			case o.obj() == x.obj(): // the same object, shared by both snapshots
			case !same(o, x):
				changed[x.obj().Name] = true
			case !samePlace(o, x):
				moved[x.obj().Name] = true
			}
			i, j = i+1, j+1
		}
	}
	return changed, moved
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
