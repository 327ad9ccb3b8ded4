package scheduling

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation"
)

// fileObject files a decoded object under its kind after the checks that need the whole object.
func fileObject(objs *objects, obj Object, spec any) {
	switch s := spec.(type) {
	case *EnvironmentSpec:
		objs.environments = append(objs.environments, &Environment{Object: obj, Spec: *s})
	case *BaseRepoSpec:
		objs.baseRepos = append(objs.baseRepos, &BaseRepo{Object: obj, Spec: *s})
	case *ManifestsSpec:
		objs.gitopsRepos = append(objs.gitopsRepos, &GitOpsRepo{Object: obj, Spec: *s})
	case *WorkloadRegistrationSpec:
		objs.registrations = append(objs.registrations, &WorkloadRegistration{Object: obj, Spec: *s})
	case *WorkloadSpec:
		objs.workloads = append(objs.workloads, &Workload{Object: obj, Spec: *s})
	case *DeploymentTargetSpec:
		objs.targets = append(objs.targets, authoredTarget(obj, s))
	case *ClusterTypeSpec:
		objs.clusterTypes = append(objs.clusterTypes, &ClusterType{Object: obj, Spec: *s})
	case *TemplateSpec:
		objs.templates = append(objs.templates, &Template{Object: obj, Spec: *s})
	case *SchedulingPolicySpec:
		objs.policies = append(objs.policies, &SchedulingPolicy{Object: obj, Spec: *s})
	case *ConfigSchemaSpec:
		objs.schemas = append(objs.schemas, &ConfigSchema{Object: obj, Spec: *s})
	case *FreezeSpec:
		objs.freezes = append(objs.freezes, &Freeze{Object: obj, Spec: *s})
	case *map[string]string:
		objs.configMaps = append(objs.configMaps, &ConfigMap{Object: obj, Data: *s})
	default:
		panic(fmt.Sprintf("scheduling: unexpected spec %T", spec))
	}
}

// authoredTarget turns a DeploymentTarget written directly into the model's target.
func authoredTarget(obj Object, s *DeploymentTargetSpec) *DeploymentTarget {
	return &DeploymentTarget{
		Object:        obj,
		Workload:      obj.Labels["workload"],
		Workspace:     obj.Labels["workspace"],
		Environment:   s.Environment,
		Manifests:     s.Manifests,
		ConfigSchemas: s.ConfigSchemas,
	}
}

// validateTargets checks what strict decoding cannot, target names and labels, and returns
// the indices of the targets that cannot be used.
func validateTargets(w *Workload, errs *Errors, pol Policy) map[int]bool {
	bad := map[int]bool{}
	seen := map[string]bool{}
	for i, t := range w.Spec.DeploymentTargets {
		d := &fieldDecoder{pos: w.Pos, ref: w.Ref(), errs: errs, lines: w.lines, ok: true}
		path := fmt.Sprintf("spec.deploymentTargets[%d]", i)
		line := d.lineOf(path+".name", w.Pos.Line)
		if problems := validation.IsDNS1123Label(t.Name); len(problems) > 0 {
			d.fail(line, "%s.name: invalid deployment target name %q: %s", path, t.Name, problems[0])
		} else {
			for _, p := range validation.IsDNS1123Label(TargetName(w.Name, t.Name)) {
				d.fail(line, "%s.name: deployment target %q: %s", path, TargetName(w.Name, t.Name), p)
			}
		}
		if seen[t.Name] {
			d.fail(line, "%s.name: deployment target %q is defined twice", path, t.Name)
		}
		seen[t.Name] = true
		validateLabels(d, t.Labels, path+".labels")
		for _, p := range validation.IsDNS1123Label(t.Environment) {
			d.fail(d.lineOf(path+".environment", line), "%s.environment: invalid environment name %q: %s", path, t.Environment, p)
		}
		validateManifests(d, t.Manifests, path+".manifests", pol)
		validateSchemas(d, append(append([]string(nil), t.ConfigSchemas...), w.Spec.ConfigSchemas...), path+".configSchemas", line)
		bad[i] = !d.ok
	}
	return bad
}

// TargetName is the name of a deployment target: `<workload>-<target>`.
func TargetName(workload, target string) string { return workload + "-" + target }

func sortStrings(s []string) { sort.Strings(s) }
