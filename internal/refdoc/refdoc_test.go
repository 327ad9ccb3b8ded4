package refdoc

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

const (
	schedulingDir = "../../scheduling"
	referenceFile = "../../docs/reference.md"
)

func generate(t *testing.T, dir string) *Reference {
	t.Helper()
	ref, err := Generate(dir)
	require.NoError(t, err)
	return ref
}

// docs/reference.md is what the types say today.
func TestReferenceIsUpToDate(t *testing.T) {
	ref := generate(t, schedulingDir)
	onDisk, err := os.ReadFile(referenceFile)
	require.NoError(t, err)
	require.True(t, string(onDisk) == string(ref.Markdown),
		"docs/reference.md is stale: run `make docs` (go generate ./scheduling) and commit it")
}

// Every field of every kind has a doc comment, an example and, when optional, a default.
func TestEveryFieldIsDocumented(t *testing.T) {
	require.Empty(t, generate(t, schedulingDir).Problems)
}

// copySources copies package scheduling's Go files into a folder, editing one with edit.
func copySources(t *testing.T, file string, edit func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	names, err := filepath.Glob(filepath.Join(schedulingDir, "*.go"))
	require.NoError(t, err)
	for _, n := range names {
		data, err := os.ReadFile(n)
		require.NoError(t, err)
		text := string(data)
		if filepath.Base(n) == file {
			text = edit(text)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(n)), []byte(text), 0o644))
	}
	return dir
}

// A field added without documentation is a problem, and changes the reference.
func TestAnUndocumentedFieldIsCaught(t *testing.T) {
	const anchor = "\tConfigType string `yaml:\"configType\" required:\"true\" example:\"configmap\"`\n"
	dir := copySources(t, "types.go", func(s string) string {
		require.Contains(t, s, anchor)
		return strings.Replace(s, anchor, anchor+"\tMaxNodes int `yaml:\"maxNodes\"`\n", 1)
	})
	ref := generate(t, dir)
	require.Equal(t, []string{
		"ClusterTypeSpec.MaxNodes (ClusterType spec.maxNodes): no doc comment",
		`ClusterTypeSpec.MaxNodes (ClusterType spec.maxNodes): no example tag (example:"…")`,
		`ClusterTypeSpec.MaxNodes (ClusterType spec.maxNodes): optional, but no default tag (default:"…")`,
	}, ref.Problems)
	require.Contains(t, string(ref.Markdown), "| `spec.maxNodes` | integer | none |  |")

	documented := copySources(t, "types.go", func(s string) string {
		return strings.Replace(s, anchor, anchor+"\t// MaxNodes bounds the clusters of the type.\n\tMaxNodes int `yaml:\"maxNodes\" default:\"0\" example:\"12\"`\n", 1)
	})
	ref = generate(t, documented)
	require.Empty(t, ref.Problems)
	require.Contains(t, string(ref.Markdown), "| `spec.maxNodes` | integer | `0` | MaxNodes bounds the clusters of the type. Example: `12`. |")
	require.Contains(t, string(ref.Examples["ClusterType"]), "  maxNodes: 12\n")
}

// A new kind needs its type documented too.
func TestAnUndocumentedKindIsCaught(t *testing.T) {
	dir := copySources(t, "types.go", func(s string) string {
		return regexp.MustCompile(`(?m)(^//.*\n)+type ClusterType struct`).ReplaceAllString(s, "type ClusterType struct")
	})
	require.Contains(t, generate(t, dir).Problems, "type ClusterType: no doc comment")
}

// mapFS makes a file system of one file per example.
func mapFS(files map[string][]byte) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: data}
	}
	return fsys
}

// workloadRepo serves the Workload example to the registration example, whatever it points at.
type workloadRepo struct{ fsys fstest.MapFS }

func (w workloadRepo) Workload(scheduling.ManifestsSpec) (scheduling.Source, error) {
	return scheduling.Source{FS: w.fsys, Name: "workload"}, nil
}

// firstEnvironment is the upstream environment the Environment example names.
const firstEnvironment = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata:
  name: dev
spec:
  controlPlane:
    repo: https://github.com/org/control-plane
    branch: dev
    path: .
  promotion:
    approval: automatic
`

// Every kind's example in the reference decodes strictly with the app's own loader: the
// examples use the fields as they are, with valid values.
func TestExamplesDecode(t *testing.T) {
	ex := generate(t, schedulingDir).Examples
	// The example promotes after dev: dev is declared beside it, as the first environment.
	envs, errs := scheduling.LoadEnvironments(scheduling.Source{FS: mapFS(map[string][]byte{
		".environments/stage.yaml": ex["Environment"], ".environments/dev.yaml": []byte(firstEnvironment)}), Name: "main"})
	require.Empty(t, errs)
	require.Len(t, envs, 2)

	main := mapFS(map[string][]byte{"templates/default.yaml": ex["Template"], "workloads/payments.yaml": ex["WorkloadRegistration"],
		"schemas/payments.yaml": ex["ConfigSchema"]})
	env := mapFS(map[string][]byte{"base-repo.yaml": ex["BaseRepo"], "gitops-repo.yaml": ex["GitOpsRepo"],
		"cluster-types/large.yaml": ex["ClusterType"], "policies/payments.yaml": ex["SchedulingPolicy"],
		"configs/west-us.yaml": ex["ConfigMap"], "targets/ingress.yaml": ex["DeploymentTarget"]})
	workloads := mapFS(map[string][]byte{"deploy/payments-api.yaml": ex["Workload"]})
	snap := scheduling.Load(scheduling.Inputs{Environment: "dev", Env: scheduling.Source{FS: env, Name: "dev"},
		Main: scheduling.Source{FS: main, Name: "main"}, Workloads: workloadRepo{workloads}})
	require.Empty(t, snap.Broken, "every example decodes: %v", snap.Errors)
	require.Len(t, snap.ClusterTypes, 1)
	require.Len(t, snap.Templates, 1)
	require.Len(t, snap.Policies, 1)
	require.Len(t, snap.ConfigMaps, 1)
	require.Len(t, snap.ConfigSchemas, 1)
	require.Len(t, snap.Workloads, 1)
	require.NotNil(t, snap.GitOpsRepo)
	require.NotNil(t, snap.BaseRepo)
	require.Len(t, snap.Targets, 2, "the Workload's target for dev and the DeploymentTarget written directly")
}
