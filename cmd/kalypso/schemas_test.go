package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// schemaDoc reads a JSON-schema document of testdata/configschemas, indented as a YAML block
// scalar at the given depth.
func schemaDoc(t *testing.T, name, indent string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "configschemas", name))
	require.NoError(t, err)
	return "|\n" + indent + strings.ReplaceAll(strings.TrimRight(string(data), "\n"), "\n", "\n"+indent) + "\n"
}

// observabilityWithSchemas is the fixture's workload with a JSON schema for the whole
// workload and one for its grafana target, as the reference's Workloads carry them.
func observabilityWithSchemas(t *testing.T, workloadSchema, grafanaSchema string) string {
	return strings.NewReplacer(
		"spec:\n", "spec:\n  configSchemas:\n    - "+schemaDoc(t, workloadSchema, "      "),
		"      environment: dev\n      manifests:\n        repo: https://github.com/microsoft/kalypso-svc-gitops\n        branch: dev\n        path: ./grafana",
		"      environment: dev\n      configSchemas:\n        - "+schemaDoc(t, grafanaSchema, "          ")+
			"      manifests:\n        repo: https://github.com/microsoft/kalypso-svc-gitops\n        branch: dev\n        path: ./grafana",
	).Replace(observabilityWorkload)
}

// observabilityFile is the fixture's workload, below its workloads folder.
const observabilityFile = "microsoft/kalypso-svc-src/main/workloads/observability.yaml"

// JSON-schema documents on a Workload and on one of its targets are schemas, not names: they
// are applied to the composed config of the target's assignments, the Workload's to every
// target, as the reference applies them.
func TestWorkloadConfigSchemasAreJSONSchemaDocuments(t *testing.T) {
	const file = observabilityFile
	f := newFleetFixture(t)
	f.write(t, "workloads", file, observabilityWithSchemas(t, "workload.json", "target.json"))
	code, stdout, stderr := runCLI(t, append([]string{"validate"}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "environment dev is valid: 4 cluster types, 2 deployment targets, 4 assignments\n", stdout)

	f.write(t, "workloads", file, observabilityWithSchemas(t, "workload.json", "not-json.json"))
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr = runCLI(t, append([]string{"render", "--out", out}, f.args()...)...)
	require.Equal(t, 1, code)
	require.Regexp(t, `observability.yaml:\d+: DeploymentTarget "observability-grafana": config of 2 assignments \(large/observability-grafana, small/observability-grafana\): schema must be JSON`, stderr)
	require.NoFileExists(t, filepath.Join(out, "small/observability-grafana/reconciler.yaml"))
	require.FileExists(t, filepath.Join(out, "small/observability-prometheus/reconciler.yaml"), "the other target is rendered")

	f.write(t, "workloads", file, observabilityWithSchemas(t, "workload.json", "target.json"))
	f.edit(t, "workloads", file, `"required": ["CLUSTER_NAME"]`, `"required": ["CLUSTER_NAME", "REPLICAS"]`)
	code, _, stderr = runCLI(t, append([]string{"validate"}, f.args()...)...)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "config of 2 assignments (large/observability-grafana, small/observability-grafana): config data validation failed")
	require.Contains(t, stderr, "missing property 'REPLICAS'")
	require.NotContains(t, stderr, "observability-prometheus")
}

// A workload value holding template text is written as it is, never run: the reference would
// render it again with the platform's config in scope.
func TestDivergenceWorkloadValuesAreNeverRunAsTemplates(t *testing.T) {
	f := newFleetFixture(t)
	f.edit(t, "workloads", "microsoft/kalypso-svc-src/main/workloads/observability.yaml", "path: ./grafana", `path: '{{ .ConfigData | toYaml | b64enc }}'`)
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI(t, append([]string{"render", "--out", out}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(filepath.Join(out, smallGrafana))
	require.NoError(t, err)
	require.Contains(t, string(data), `path: "{{ .ConfigData | toYaml | b64enc }}"`)
}

// In directory mode there is no history to tell which of two registrations delivering the same
// Workload name is older: neither is rendered, both keep their last output, nothing is
// removed, and the error names both files.
func TestDirectoryModeContestedWorkloadGoesToNobody(t *testing.T) {
	f := newFleetFixture(t)
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI(t, append([]string{"render", "--out", out}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	before := readDir(t, out)

	f.write(t, "main", "workloads/aaa-other.yaml", otherRegistration)
	f.write(t, "workloads", "other/svc-src/main/workloads/observability.yaml", strings.ReplaceAll(
		observabilityWithSchemas(t, "workload.json", "target.json"), "kalypso-svc-gitops", "other-gitops"))
	code, _, stderr = runCLI(t, append([]string{"render", "--out", out}, f.args()...)...)
	require.Equal(t, 1, code)
	victim := filepath.Join(f.workloads, "microsoft/kalypso-svc-src/main/workloads/observability.yaml")
	other := filepath.Join(f.workloads, "other/svc-src/main/workloads/observability.yaml")
	require.Contains(t, stderr, other+`:1: Workload "observability": Workload "observability" is also produced at `+victim+`:1 (registration "platform-svc"); without the control plane's history`)
	require.Contains(t, stderr, victim+`:1: Workload "observability": Workload "observability" is also produced at `+other+`:1 (registration "aaa-other")`)
	require.Equal(t, before, readDir(t, out), "both keep their last output, nothing is removed")
}

// otherRegistration registers another team's repository, other/svc-src, named to sort first.
const otherRegistration = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata:
  name: aaa-other
spec:
  workload:
    repo: https://github.com/other/svc-src
    branch: main
    path: ./workloads
  workspace: other-team
`
