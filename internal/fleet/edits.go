package fleet

import (
	"fmt"
	"strings"
	"testing/fstest"
)

// CanaryTemplate is the reconciler template AddCanary gives to some cluster types.
const CanaryTemplate = "arc-flux-canary"

// Edit is one change of a fleet's files, as one push to one repository would make it.
type Edit struct {
	Name  string             // what the edit does, e.g. "one workload edit"
	Apply func(*Fleet) error // changes the fleet's files
}

// Replace replaces the only occurrence of old with new in the file at path of fsys.
func Replace(fsys fstest.MapFS, path, old, new string) error {
	f, ok := fsys[path]
	if !ok {
		return fmt.Errorf("fleet: no file %s", path)
	}
	text := string(f.Data)
	if n := strings.Count(text, old); n != 1 {
		return fmt.Errorf("fleet: %s contains %q %d times, want once", path, old, n)
	}
	fsys[path] = file(strings.Replace(text, old, new, 1))
	return nil
}

// AddCanary adds CanaryTemplate, a copy of the arc-flux template, and makes every
// `every`-th cluster type (0, every, 2×every…) use it; those all use arc-flux, so nothing
// renders differently. It returns how many cluster types use the canary.
func (f *Fleet) AddCanary(every int) (int, error) {
	src := f.Main["templates/scheduler_v1alpha1_template_arc-flux.yaml"]
	if src == nil || every <= 0 || every%2 != 0 {
		return 0, fmt.Errorf("fleet: cannot add a canary every %d cluster types", every)
	}
	f.Main["templates/scheduler_v1alpha1_template_"+CanaryTemplate+".yaml"] = file(strings.Replace(string(src.Data), "name: arc-flux\n", "name: "+CanaryTemplate+"\n", 1))
	n := 0
	for i := 0; i < f.Spec.ClusterTypes; i += every {
		if err := Replace(f.Env, f.ClusterTypeFile(i), "reconciler: arc-flux\n", "reconciler: "+CanaryTemplate+"\n"); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// ConfigOfClusterType is the index of the platform config that matches only cluster type 0
// by its `cluster-type` label, or -1 when the fleet has none.
func (f *Fleet) ConfigOfClusterType() int {
	if f.Spec.Configs > 1+configByClusterType && f.Spec.ClusterTypes > 0 {
		return 1 + configByClusterType
	}
	return -1
}

// BenchEdits are the changes `kalypso bench` measures, in order, on a fleet with AddCanary(10):
// a platform config of one cluster type, a workload's label, the canary template, and a
// policy that stops, then again starts, selecting workload 0.
func BenchEdits() []Edit {
	const exclude = "      matchLabels:\n        tier: tier-0\n"
	const excluded = exclude + "      matchExpressions:\n        - {key: workload, operator: NotIn, values: [wl-placeholder]}\n"
	return []Edit{
		{"platform config of one cluster type", func(f *Fleet) error {
			if i := f.ConfigOfClusterType(); i >= 0 {
				return Replace(f.Env, f.ConfigFile(i), "memory: 8Gi", "memory: 16Gi")
			}
			return fmt.Errorf("fleet: no config of one cluster type")
		}},
		{"one workload edit", func(f *Fleet) error {
			return Replace(f.Workloads, f.WorkloadFile(0), "stack: bench\n", "stack: bench-2\n")
		}},
		{"template used by 10% of cluster types", func(f *Fleet) error {
			return Replace(f.Main, "templates/scheduler_v1alpha1_template_"+CanaryTemplate+".yaml", "prune: true", "prune: false")
		}},
		{"policy stops selecting one workload", func(f *Fleet) error {
			return Replace(f.Env, f.PolicyFile(0), exclude, strings.Replace(excluded, "wl-placeholder", f.WorkloadName(0), 1))
		}},
		{"policy selects it again", func(f *Fleet) error {
			return Replace(f.Env, f.PolicyFile(0), strings.Replace(excluded, "wl-placeholder", f.WorkloadName(0), 1), exclude)
		}},
	}
}
