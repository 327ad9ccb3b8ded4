package fleet

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Kinds of label-matched platform config; config i ≥ 1 has kind (i-1) mod 3.
const (
	configByRegion = iota
	configBySize
	configByClusterType
	configKinds
)

var configKindNames = [configKinds]string{"region", "size", "cluster-type"}

// ClusterTypeName is the name of cluster type i.
func (f *Fleet) ClusterTypeName(i int) string { return name("ct", i, f.Spec.ClusterTypes) }

// ClusterTypeFile is the path in Env of cluster type i.
func (f *Fleet) ClusterTypeFile(i int) string {
	return "cluster-types/" + f.ClusterTypeName(i) + ".yaml"
}

// ConfigFile is the path in Env of platform config i (0 is the environment-wide one).
func (f *Fleet) ConfigFile(i int) string { return "configs/" + f.configName(i) + ".yaml" }

// PolicyFile is the path in Env of scheduling policy i.
func (f *Fleet) PolicyFile(i int) string {
	return "scheduling/" + name("policy", i, f.Spec.Policies) + ".yaml"
}

func (f *Fleet) configName(i int) string {
	if i == 0 {
		return name("config", 0, f.Spec.Configs) + "-environment"
	}
	return name("config", i, f.Spec.Configs) + "-" + configKindNames[(i-1)%configKinds]
}

// configsOfKind counts the label-matched configs of a kind (at least 1, so it can divide).
func (f *Fleet) configsOfKind(kind int) int {
	n := 0
	for i := 1; i < f.Spec.Configs; i++ {
		if (i-1)%configKinds == kind {
			n++
		}
	}
	return max(n, 1)
}

// Label values of cluster type i: every one matches exactly one region and one size config.
func (f *Fleet) region(i int) string {
	return fmt.Sprintf("region-%d", i%f.configsOfKind(configByRegion))
}

func (f *Fleet) size(i int) string {
	return fmt.Sprintf("size-%d", i/f.configsOfKind(configByRegion)%f.configsOfKind(configBySize))
}

func (f *Fleet) group(i int) string { return fmt.Sprintf("g%d", i%f.groups()) }

// groups is how many `group` label values cluster types are spread over.
func (f *Fleet) groups() int { return max(f.Spec.Policies, 1) }

// tiers is how many `tier` label values workloads are spread over.
func (f *Fleet) tiers() int { return max(min(f.Spec.Policies, 2), 1) }

func (f *Fleet) addClusterTypes() {
	for i := range f.Spec.ClusterTypes {
		reconciler := "arc-flux"
		if i%2 == 1 {
			reconciler = "argocd"
		}
		f.Env[f.ClusterTypeFile(i)] = file(fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata:
  name: %s
  labels:
    region: %s
    size: %s
    group: %s
spec:
  reconciler: %s
  namespaceService: default
  configType: configmap
`, f.ClusterTypeName(i), f.region(i), f.size(i), f.group(i), reconciler))
	}
}

func (f *Fleet) addConfigs() {
	for i := range f.Spec.Configs {
		labels, data := f.config(i)
		labels["platform-config"] = "true"
		f.Env[f.ConfigFile(i)] = file(configMapYAML(f.configName(i), labels, data))
	}
}

// config returns the labels and data of platform config i; later configs win on collisions.
func (f *Fleet) config(i int) (labels, data map[string]string) {
	if i == 0 {
		return map[string]string{}, map[string]string{
			"ENVIRONMENT":                      f.Spec.Environment,
			"LOG_LEVEL":                        "info",
			"SOME_COMMON_ENVIRONMENT_VARIABLE": "false",
			"FEATURES":                         "- metrics\n- tracing\n",
		}
	}
	j := (i - 1) / configKinds
	switch (i - 1) % configKinds {
	case configByRegion:
		r := fmt.Sprintf("region-%d", j)
		return map[string]string{"region": r}, map[string]string{
			"REGION":       r,
			"DATABASE_URL": "mysql://" + r + ".db:8806/mysql",
			"FEATURES":     "- geo-" + r + "\n",
		}
	case configBySize:
		s := fmt.Sprintf("size-%d", j)
		return map[string]string{"size": s}, map[string]string{
			"CLUSTER_SIZE": s,
			"REPLICAS":     strconv.Itoa(j + 2),
			"RESOURCES":    "cpu: \"2\"\nmemory: 4Gi\n",
		}
	default:
		ct := f.ClusterTypeName(j % max(f.Spec.ClusterTypes, 1))
		return map[string]string{"cluster-type": ct}, map[string]string{
			"CLUSTER_NAME": ct,
			"RESOURCES":    "memory: 8Gi\n",
		}
	}
}

// configMapYAML writes a ConfigMap; multi-line values become literal blocks.
func configMapYAML(cmName string, labels, data map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  labels:\n", cmName)
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		fmt.Fprintf(&b, "    %s: %q\n", k, labels[k])
	}
	b.WriteString("data:\n")
	for _, k := range slices.Sorted(maps.Keys(data)) {
		v := data[k]
		if !strings.Contains(v, "\n") {
			fmt.Fprintf(&b, "  %s: %q\n", k, v)
			continue
		}
		fmt.Fprintf(&b, "  %s: |\n", k)
		for _, line := range strings.SplitAfter(strings.TrimSuffix(v, "\n"), "\n") {
			b.WriteString("    " + line)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// addPolicies splits the targets by `tier` and the cluster types by `group` so that the
// policies together assign every target to every cluster type, each pair exactly once.
func (f *Fleet) addPolicies() {
	tiers := f.tiers()
	for p := range f.Spec.Policies {
		tier := p % tiers
		ofTier := (f.Spec.Policies - tier + tiers - 1) / tiers // policies sharing this tier
		var groups []string
		for g := p / tiers; g < f.groups(); g += ofTier {
			groups = append(groups, fmt.Sprintf("g%d", g))
		}
		f.Env[f.PolicyFile(p)] = file(fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: %s
spec:
  deploymentTargetSelector:
    labelSelector:
      matchLabels:
        tier: tier-%d
  clusterTypeSelector:
    labelSelector:
      matchExpressions:
        - key: group
          operator: In
          values: [%s]
`, name("policy", p, f.Spec.Policies), tier, strings.Join(groups, ", ")))
	}
}
