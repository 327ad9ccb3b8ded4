package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fleetFixture is the sample control plane with main HEAD promoted and a second policy and a
// second target, so that dev has four assignments: {large, small} × {prometheus, grafana}.
type fleetFixture struct {
	main, env, workloads string
}

func newFleetFixture(t *testing.T) *fleetFixture {
	t.Helper()
	root := t.TempDir()
	f := &fleetFixture{
		main:      filepath.Join(root, "main"),
		env:       pinnedEnvDir(t, "dev", mainHeadID),
		workloads: filepath.Join(root, "workload-sources"),
	}
	require.NoError(t, os.CopyFS(f.main, os.DirFS(filepath.Join(sampleDir, "input/control-plane/main"))))
	require.NoError(t, os.CopyFS(f.workloads, os.DirFS(filepath.Join(sampleDir, "input/workload-sources"))))
	f.write(t, "env", "scheduling/small-policy.yaml", `apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: small-policy
spec:
  deploymentTargetSelector:
    workspace: platform-team
    labelSelector:
      matchLabels:
        stack: observability
  clusterTypeSelector:
    labelSelector:
      matchLabels:
        size: small
`)
	f.write(t, "workloads", observabilityFile, observabilityWorkload)
	return f
}

// observabilityWorkload is the fixture's Workload: targets prometheus and grafana in dev.
const observabilityWorkload = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: observability
  labels:
    type: service
    stack: observability
spec:
  deploymentTargets:
    - name: prometheus
      environment: dev
      manifests:
        repo: https://github.com/microsoft/kalypso-svc-gitops
        branch: dev
        path: ./prometheus
    - name: grafana
      environment: dev
      manifests:
        repo: https://github.com/microsoft/kalypso-svc-gitops
        branch: dev
        path: ./grafana
`

func (f *fleetFixture) dir(which string) string {
	return map[string]string{"main": f.main, "env": f.env, "workloads": f.workloads}[which]
}

func (f *fleetFixture) write(t *testing.T, which, rel, content string) {
	t.Helper()
	p := filepath.Join(f.dir(which), rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func (f *fleetFixture) edit(t *testing.T, which, rel, old, new string) {
	t.Helper()
	p := filepath.Join(f.dir(which), rel)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Contains(t, string(data), old)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644))
}

func (f *fleetFixture) args() []string {
	return []string{"--main-dir", f.main, "--env-dir", f.env, "--workloads-dir", f.workloads}
}

const (
	largeTemplates = "large/observability-prometheus/reconciler.yaml"
	smallGrafana   = "small/observability-grafana/reconciler.yaml"
)

func TestFleetFixtureRendersFourAssignments(t *testing.T) {
	f := newFleetFixture(t)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, append([]string{"render", "--out", out}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "4 assignments rendered, 0 failed")
	code, stdout, _ = runCLI(t, append([]string{"validate"}, f.args()...)...)
	require.Equal(t, 0, code)
	require.Equal(t, "environment dev is valid: 4 cluster types, 2 deployment targets, 4 assignments\n", stdout)
}

// TestBadInput tries each kind of mistake a new user makes. Each must fail validate and render
// with exit 1 and a `file:line: Object: message` error, write nothing for the assignments that
// depend on the mistake and still render the others.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name     string
		mistake  func(t *testing.T, f *fleetFixture)
		want     string   // regexp matched against stderr
		missing  []string // files that must not be written
		rendered []string // files that must still be written
	}{
		{
			name: "YAML syntax error",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.edit(t, "env", "cluster-types/west-us/small/small-cluster-type.yaml", "  reconciler: argocd", "  reconciler: [argocd")
			},
			want:     `small-cluster-type.yaml:\d+: ClusterType "small": YAML syntax error: `,
			missing:  []string{smallGrafana, "small/README.md"},
			rendered: []string{largeTemplates},
		},
		{
			name: "unknown field",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.edit(t, "env", "cluster-types/west-us/small/small-cluster-type.yaml", "  reconciler: argocd", "  reconciler: argocd\n  reconciller: argocd")
			},
			want:     `small-cluster-type.yaml:10: ClusterType "small": spec: unknown field "reconciller"`,
			missing:  []string{smallGrafana},
			rendered: []string{largeTemplates},
		},
		{
			name: "missing required field",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.edit(t, "env", "cluster-types/west-us/small/small-cluster-type.yaml", "  namespaceService: default\n", "")
			},
			want:     `small-cluster-type.yaml:9: ClusterType "small": spec: missing required field "namespaceService"`,
			missing:  []string{smallGrafana},
			rendered: []string{largeTemplates},
		},
		{
			name: "unknown selector operator",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.write(t, "env", "scheduling/small-policy.yaml", `apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: small-policy
spec:
  deploymentTargetSelector:
    labelSelector:
      matchExpressions:
        - key: stack
          operator: Equals
          values: [observability]
  clusterTypeSelector:
    labelSelector:
      matchLabels:
        size: small
`)
			},
			want:     `small-policy.yaml:10: SchedulingPolicy "small-policy": .*"Equals" is not a valid label selector operator`,
			missing:  []string{smallGrafana},
			rendered: []string{largeTemplates},
		},
		{
			name: "reference to a missing template",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.edit(t, "env", "cluster-types/west-us/small/small-cluster-type.yaml", "reconciler: argocd", "reconciler: flux-v3")
			},
			want:     `small-cluster-type.yaml:9: ClusterType "small": spec.reconciler: template "flux-v3" does not exist`,
			missing:  []string{smallGrafana},
			rendered: []string{largeTemplates, "small/README.md"},
		},
		{
			name: "path traversal in a deployment target",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.edit(t, "workloads", "microsoft/kalypso-svc-src/main/workloads/observability.yaml", "name: grafana", "name: ../../x")
			},
			want:     `observability.yaml:\d+: Workload "observability": spec.deploymentTargets\[1\].name: invalid deployment target name "../../x"`,
			missing:  []string{smallGrafana, "x/reconciler.yaml"},
			rendered: []string{largeTemplates},
		},
		{
			name: "YAML injection through a workload value",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.edit(t, "workloads", "microsoft/kalypso-svc-src/main/workloads/observability.yaml", "path: ./grafana",
					`path: './grafana" # the rest of the line is cut'`)
			},
			want:     `observability.yaml:21: DeploymentTarget "observability-grafana": rendering small/observability-grafana: value "./grafana\\" # the rest of the line is cut" of manifests.path cannot be placed as one YAML scalar where Template "argocd" at \S+/scheduler_v1alpha1_template_argocd.yaml:22 writes it: the scalar reads back as "./grafana"`,
			missing:  []string{smallGrafana},
			rendered: []string{largeTemplates},
		},
		{
			name: "YAML injection through a workload value with a line break",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.edit(t, "workloads", "microsoft/kalypso-svc-src/main/workloads/observability.yaml", "path: ./grafana",
					`path: "./grafana\"\n  prune: true\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: pwn}\n"`)
			},
			want:     `observability.yaml:\d+: Workload "observability": spec.deploymentTargets\[1\].manifests.path: invalid path .*control characters`,
			missing:  []string{smallGrafana},
			rendered: []string{largeTemplates},
		},
		{
			name: "workload repository on another host",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.edit(t, "workloads", "microsoft/kalypso-svc-src/main/workloads/observability.yaml", "path: ./grafana", "path: ./grafana\n        extra: x")
				f.edit(t, "workloads", "microsoft/kalypso-svc-src/main/workloads/observability.yaml",
					"repo: https://github.com/microsoft/kalypso-svc-gitops\n        branch: dev\n        path: ./grafana",
					"repo: https://evil.example.com/microsoft/kalypso-svc-gitops\n        branch: dev\n        path: ./grafana")
			},
			want:     `observability.yaml:\d+: Workload "observability": spec.deploymentTargets\[1\].manifests.repo: repository "https://evil.example.com/microsoft/kalypso-svc-gitops" is not on an allowed host \(github.com\)`,
			missing:  []string{smallGrafana},
			rendered: []string{largeTemplates},
		},
		{
			name: "platform config smuggled into a workload repository",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.write(t, "workloads", "microsoft/kalypso-svc-src/main/workloads/config.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: aaa-config
  labels: {platform-config: "true"}
data:
  ENVIRONMENT: [broken
`)
			},
			want:     `workloads/config.yaml:1: YAML syntax error|workloads/config.yaml:\d+: ConfigMap "aaa-config": only Workload objects are read from a workload repository`,
			rendered: []string{largeTemplates, smallGrafana},
		},
		{
			name: "invalid name",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.edit(t, "env", "cluster-types/west-us/small/small-cluster-type.yaml", "name: small", "name: Small_Clusters")
			},
			want:     `small-cluster-type.yaml:4: ClusterType "Small_Clusters": invalid name "Small_Clusters"`,
			missing:  []string{smallGrafana},
			rendered: []string{largeTemplates},
		},
		{
			name: "config violating a schema",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.write(t, "env", "configs/schema.yaml", `apiVersion: scheduler.kalypso.io/v1alpha1
kind: ConfigSchema
metadata:
  name: small-needs-replicas
  labels:
    cluster-type: small
spec:
  schema: |
    {"type": "object", "required": ["REPLICAS"], "properties": {"REPLICAS": {"type": "integer"}}}
`)
			},
			want:     `schema.yaml:9: ConfigSchema "small-needs-replicas": config of 2 assignments \(small/observability-grafana, small/observability-prometheus\): config data validation failed`,
			missing:  []string{smallGrafana},
			rendered: []string{largeTemplates},
		},
		{
			name: "template that fails to execute",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.edit(t, "main", "templates/scheduler_v1alpha1_template_argocd.yaml", `namespace: "{{ .Namespace}}"`, `namespace: "{{ .Namespace.Nope }}"`)
			},
			want:     `scheduler_v1alpha1_template_argocd.yaml:19: Template "argocd": rendering 2 assignments \(small/observability-grafana, small/observability-prometheus\): .*can't evaluate field Nope`,
			missing:  []string{smallGrafana},
			rendered: []string{largeTemplates},
		},
		{
			name: "template that nests itself forever",
			mistake: func(t *testing.T, f *fleetFixture) {
				f.write(t, "env", "configs/loop-config.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: loop-config
  labels:
    platform-config: "true"
    cluster-type: small
data:
  LOOP: "{{ .ConfigData.LOOP }}"
`)
			},
			want:     `scheduler_v1alpha1_template_configmap.yaml:\d+: Template "configmap": rendering 2 assignments \(small/observability-grafana, small/observability-prometheus\): output still contains .* after 8 nested renderings`,
			missing:  []string{smallGrafana},
			rendered: []string{largeTemplates},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleetFixture(t)
			tc.mistake(t, f)
			code, stdout, stderr := runCLI(t, append([]string{"validate"}, f.args()...)...)
			require.Equal(t, 1, code, "validate: %s%s", stdout, stderr)
			require.Regexp(t, regexp.MustCompile(tc.want), stderr)
			for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
				require.Regexp(t, `^(\S+:\d+: .+|environment dev: (1 error|\d+ errors))$`, line)
			}

			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr = runCLI(t, append([]string{"render", "--out", out}, f.args()...)...)
			require.Equal(t, 1, code)
			require.Regexp(t, regexp.MustCompile(tc.want), stderr)
			for _, p := range tc.missing {
				require.NoFileExists(t, filepath.Join(out, p))
			}
			for _, p := range tc.rendered {
				require.FileExists(t, filepath.Join(out, p))
			}
		})
		t.Run(tc.name+" keeps the last good output", func(t *testing.T) {
			f := newFleetFixture(t)
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := runCLI(t, append([]string{"render", "--out", out}, f.args()...)...)
			require.Equal(t, 0, code, stderr)
			before := readDir(t, out)
			tc.mistake(t, f)
			code, _, _ = runCLI(t, append([]string{"render", "--out", out}, f.args()...)...)
			require.Equal(t, 1, code)
			after := readDir(t, out)
			for _, p := range tc.missing {
				require.Equal(t, before[p], after[p], "%s must keep its last good content", p)
			}
			for p := range before {
				require.Contains(t, after, p, "%s must not be removed because an input is broken", p)
			}
		})
	}
}

// TestSevenMistakesInOneRun: every file's own errors are reported in one run of validate,
// whatever else is broken: a broken ConfigMap hides neither a schema violation (reported at
// the value that violates it) nor a reference to a template that does not exist; a bad label
// hides no template syntax error; a template no cluster type uses still reports its syntax.
func TestSevenMistakesInOneRun(t *testing.T) {
	f := newFleetFixture(t)
	// 1. a ConfigMap whose YAML is broken: its labels are unknown, so it may apply everywhere
	f.edit(t, "env", "cluster-types/west-us/west-us-config.yaml", "REGION: West US", "REGION: [West US")
	// 2. a value that violates a schema
	f.edit(t, "env", "cluster-types/west-us/large/large-config.yaml", "CLUSTER_NAME: Large", "CLUSTER_NAME: Large\n  REPLICAS: many")
	f.write(t, "env", "configs/schema.yaml", `apiVersion: scheduler.kalypso.io/v1alpha1
kind: ConfigSchema
metadata:
  name: large-replicas
  labels:
    cluster-type: large
spec:
  schema: |
    {"type": "object", "properties": {"REPLICAS": {"type": "integer"}}}
`)
	// 3. a reference to a template that does not exist
	f.edit(t, "env", "cluster-types/west-us/small/small-cluster-type.yaml", "reconciler: argocd", "reconciler: flux-v3")
	// 4. and 5. a bad label and a syntax error in one template
	f.edit(t, "main", "templates/scheduler_v1alpha1_template_argocd.yaml", `someLabel: "true"`, `someLabel: "not valid!"`)
	f.edit(t, "main", "templates/scheduler_v1alpha1_template_argocd.yaml", `namespace: "{{ .Namespace}}"`, `namespace: "{{ .Namespace }"`)
	// 6. a template that no cluster type uses, with a syntax error
	f.write(t, "main", "templates/unused.yaml", `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata:
  name: unused
spec:
  type: reconciler
  manifests:
    - |
      kind: Namespace
      name: {{ .Namespace
`)
	// 7. an unknown field in a policy
	f.edit(t, "env", "scheduling/small-policy.yaml", "  clusterTypeSelector:", "  clusterTypeSelectors: {}\n  clusterTypeSelector:")

	code, stdout, stderr := runCLI(t, append([]string{"validate"}, f.args()...)...)
	require.Equal(t, 1, code, stdout)
	for _, want := range []string{
		`west-us-config.yaml:\d+: ConfigMap "west-us-config": YAML syntax error: `,
		`large-config.yaml:10: ConfigMap "large-config": config of 2 assignments \(large/observability-grafana, large/observability-prometheus\): value at /REPLICAS violates ConfigSchema "large-replicas" \(\S+/configs/schema.yaml:9\): got string, want integer`,
		`small-cluster-type.yaml:9: ClusterType "small": spec.reconciler: template "flux-v3" does not exist`,
		`scheduler_v1alpha1_template_argocd.yaml:5: Template "argocd": metadata.labels: invalid value for label "someLabel"`,
		`scheduler_v1alpha1_template_argocd.yaml:19: Template "argocd": unexpected "}" in operand`,
		`templates/unused.yaml:\d+: Template "unused": unclosed action`,
		`small-policy.yaml:\d+: SchedulingPolicy "small-policy": spec: unknown field "clusterTypeSelectors"`,
	} {
		require.Regexp(t, regexp.MustCompile(want), stderr)
	}
}
