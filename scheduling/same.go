package scheduling

import (
	"maps"
	"reflect"
	"slices"
)

// The comparisons of Diff: same* compares content (what the output can depend on), and
// same*Place the positions of an object and of its fields (what only messages cite).

func sameOptional[T any](a, b *T, same func(a, b *T) bool) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return same(a, b)
}

// sameObject compares what every object has, position included.
func sameObject(a, b *Object) bool { return sameObjectContent(a, b) && samePlace(a, b) }

func sameObjectContent(a, b *Object) bool {
	return a.Kind == b.Kind && a.Name == b.Name && a.Unknown == b.Unknown && sameStrings(a.Labels, b.Labels)
}

func samePlace(a, b *Object) bool { return a.Pos == b.Pos && sameLines(a.lines, b.lines) }

// sameLines compares the field lines of two objects: copies of a cached object share the map.
func sameLines(a, b map[string]int) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() || maps.Equal(a, b)
}

// sameObjectPlace compares the positions of two objects of any kind.
func sameObjectPlace[T named](a, b T) bool { return samePlace(a.obj(), b.obj()) }

// sameStrings compares two maps, a nil map differing from an empty one.
func sameStrings(a, b map[string]string) bool {
	return (a == nil) == (b == nil) && maps.Equal(a, b)
}

// sameList compares two lists, a nil list differing from an empty one.
func sameList[T comparable](a, b []T) bool {
	return (a == nil) == (b == nil) && slices.Equal(a, b)
}

// sameGitOpsRepo compares content: the path error is made from the new snapshot anyway.
func sameGitOpsRepo(a, b *GitOpsRepo) bool {
	return sameObjectContent(&a.Object, &b.Object) && a.Spec == b.Spec
}

func sameBaseRepo(a, b *BaseRepo) bool { return sameObject(&a.Object, &b.Object) && a.Spec == b.Spec }

func sameClusterType(a, b *ClusterType) bool {
	return sameObjectContent(&a.Object, &b.Object) && a.Spec == b.Spec
}

func sameTarget(a, b *DeploymentTarget) bool {
	return sameObjectContent(&a.Object, &b.Object) && a.Workload == b.Workload && a.Workspace == b.Workspace &&
		a.Environment == b.Environment && sameStrings(a.Manifests, b.Manifests) && sameList(a.ConfigSchemas, b.ConfigSchemas)
}

func samePolicy(a, b *SchedulingPolicy) bool {
	return sameObjectContent(&a.Object, &b.Object) && reflect.DeepEqual(a.Spec, b.Spec)
}

func sameConfigMap(a, b *ConfigMap) bool {
	return sameObjectContent(&a.Object, &b.Object) && sameStrings(a.Data, b.Data)
}

func sameConfigSchema(a, b *ConfigSchema) bool {
	return sameObjectContent(&a.Object, &b.Object) && a.Spec.Schema.Value == b.Spec.Schema.Value
}

func sameSchemaPlace(a, b *ConfigSchema) bool {
	return samePlace(&a.Object, &b.Object) && a.Spec.Schema.Line == b.Spec.Schema.Line
}

func sameTemplate(a, b *Template) bool {
	return sameObjectContent(&a.Object, &b.Object) && a.Spec.Type == b.Spec.Type && a.Spec.ContentType == b.Spec.ContentType &&
		(a.Spec.Manifests == nil) == (b.Spec.Manifests == nil) &&
		slices.EqualFunc(a.Spec.Manifests, b.Spec.Manifests, func(x, y Text) bool { return x.Value == y.Value })
}

func sameTemplatePlace(a, b *Template) bool {
	return samePlace(&a.Object, &b.Object) &&
		slices.EqualFunc(a.Spec.Manifests, b.Spec.Manifests, func(x, y Text) bool { return x.Line == y.Line })
}
