package scheduling

import (
	"testing"
)

// fuzzSeeds are documents of every kind the decoder reads, valid and broken.
var fuzzSeeds = []string{
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: large\n  labels: {region: west-us}\nspec: {reconciler: arc-flux, namespaceService: default, configType: configmap}\n",
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Template\nmetadata: {name: t}\nspec:\n  type: reconciler\n  manifests:\n    - |\n      name: {{ .DeploymentTargetName }}\n",
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata: {name: app, labels: {tier: web}}\nspec:\n  deploymentTargets:\n    - {name: a, environment: dev, labels: {x: y}, manifests: {repo: r, branch: b, path: p}}\n",
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: WorkloadRegistration\nmetadata: {name: app}\nspec: {workload: {repo: https://github.com/o/r, branch: main, path: p}, workspace: team}\n",
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: SchedulingPolicy\nmetadata: {name: p}\nspec:\n  deploymentTargetSelector: {workspace: w, labelSelector: {matchLabels: {a: b}}}\n  clusterTypeSelector: {labelSelector: {}}\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {platform-config: \"true\"}}\ndata: {A: '1', B: '[1, 2]'}\n",
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: GitOpsRepo\nmetadata: {name: dev}\nspec: {repo: https://github.com/o/g, branch: dev, path: .}\n---\napiVersion: scheduler.kalypso.io/v1alpha1\nkind: BaseRepo\nmetadata: {name: b}\nspec: {repo: r, branch: main, path: ., commit: abc}\n",
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata: {name: dev}\nspec: {controlPlane: {repo: r, branch: dev, path: .}}\n",
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: [\nspec: x\n---\nkind: Template\n",
	"a: &a [*a, *a]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n",
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata: &m {name: x}\nspec: {deploymentTargets: [&t {name: a, environment: dev, manifests: {repo: r}}, *t]}\n",
	"\t- :\n---\n--- !!binary x\n",
}

// FuzzDecode feeds arbitrary bytes to the decoder of control-plane files: it must not
// panic, and every problem it reports must name the file and a line in it.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var objs objects
		var errs Errors
		parseFile("dir/file.yaml", data, &objs, &errs)
		lines := 1 // as YAML counts them: "\r\n", "\r" and "\n" end a line
		for i, c := range data {
			if c == '\n' && (i == 0 || data[i-1] != '\r') || c == '\r' {
				lines++
			}
		}
		for _, e := range errs {
			if e.Pos.File != "dir/file.yaml" {
				t.Fatalf("error without its file: %v", e)
			}
			if e.Pos.Line < 1 || e.Pos.Line > lines+1 {
				t.Fatalf("error at line %d of a %d-line file: %v", e.Pos.Line, lines, e)
			}
		}
	})
}
