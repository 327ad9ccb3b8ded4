package scheduling

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// tenancyInputs is a control plane with two registrations, team-a and team-b, each reading
// its own repository, and one cluster type that every target is scheduled on.
func tenancyInputs(teamA, teamB map[string]string) Inputs {
	registrations := `apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata:
  name: team-a
spec:
  workload: {repo: https://github.com/org/app-a, branch: main, path: deploy}
  workspace: team-a
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata:
  name: team-b
spec:
  workload: {repo: https://github.com/org/app-b, branch: main, path: deploy}
  workspace: team-b
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: all
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
`
	files := fstest.MapFS{}
	for p, body := range teamA {
		files["org/app-a/main/deploy/"+p] = &fstest.MapFile{Data: []byte(body)}
	}
	for p, body := range teamB {
		files["org/app-b/main/deploy/"+p] = &fstest.MapFile{Data: []byte(body)}
	}
	return Inputs{
		Environment: "dev",
		Env:         Source{FS: fstest.MapFS{"env.yaml": {Data: []byte(envFiles)}}, Prefix: "dev:"},
		Main:        Source{FS: fstest.MapFS{"regs.yaml": {Data: []byte(registrations)}}, Prefix: "main:"},
		Workloads:   TreeWorkloads(files, "wl:"),
		Policy:      Policy{ManifestHosts: []string{"github.com"}, MaxFileBytes: 1 << 20},
	}
}

func workload(name, target, path string) string {
	return sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: %s
spec:
  deploymentTargets:
    - name: %s
      environment: dev
      manifests: {repo: "https://github.com/org/%s-gitops", branch: main, path: %q}
`, name, target, name, path)
}

func targetNames(snap *Snapshot) []string {
	var out []string
	for _, t := range snap.Targets {
		out = append(out, t.Name+"@"+t.Workspace)
	}
	return out
}

// A workload repository may hold only Workloads: a platform-config ConfigMap, a Template, a
// SchedulingPolicy or any Kubernetes object there is an error at its line and never used.
func TestWorkloadRepositoryGivesOnlyWorkloads(t *testing.T) {
	smuggled := `apiVersion: v1
kind: ConfigMap
metadata:
  name: aaa-config
  labels: {platform-config: "true"}
data: {DB: stolen}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata:
  name: reconciler
spec:
  type: reconciler
  manifests: ["kind: ClusterRoleBinding"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: pwn
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: broken
  labels: {platform-config: "true"}
data: [not, a, map]
`
	snap := Load(tenancyInputs(map[string]string{"w.yaml": workload("api", "dev", "./api"), "evil.yaml": smuggled}, map[string]string{"none.yaml": ""}))
	require.Empty(t, snap.ConfigMaps, "no config comes from a workload repository")
	require.Empty(t, snap.Templates, "no template comes from a workload repository")
	require.Empty(t, snap.Broken, "a broken object of another kind blocks no one")
	require.Equal(t, []string{"api-dev@team-a"}, targetNames(snap))
	require.False(t, snap.Incomplete, "nothing another team owns is held back")
	msgs := snap.Errors.Error()
	for _, want := range []string{
		`wl:org/app-a/main/deploy/evil.yaml:1: ConfigMap "aaa-config": only Workload objects are read from a workload repository`,
		`wl:org/app-a/main/deploy/evil.yaml:8: Template "reconciler": only Workload objects`,
		`wl:org/app-a/main/deploy/evil.yaml:16: ClusterRoleBinding "pwn": only Workload objects`,
		`wl:org/app-a/main/deploy/evil.yaml:21: ConfigMap "broken": only Workload objects`,
	} {
		require.Contains(t, msgs, want)
	}
}

// The values with a meaning of their own (repo, branch, path), the keys and the sizes of what a
// workload gives its targets are checked to their format; a target with a bad value is not
// rendered, and the error names its file and line. Other values are free text: where they
// land is checked when they are rendered.
func TestWorkloadValuesAreValidated(t *testing.T) {
	cases := map[string]struct{ manifests, want string }{
		"newline in path":     {`{repo: "https://github.com/org/x", branch: main, path: "./p\"\n  prune: true\n---\nkind: ClusterRoleBinding"}`, "manifests.path: invalid path"},
		"dot-dot path":        {`{repo: "https://github.com/org/x", branch: main, path: "../../etc"}`, "manifests.path: invalid path \"../../etc\": it must be a clean relative path"},
		"absolute path":       {`{repo: "https://github.com/org/x", branch: main, path: "/etc"}`, "manifests.path: invalid path \"/etc\": it must be a clean relative path"},
		"backslash in path":   {`{repo: "https://github.com/org/x", branch: main, path: 'a\..\b'}`, "manifests.path: invalid path"},
		"other host":          {`{repo: "https://evil.example.com/org/x", branch: main, path: p}`, "manifests.repo: repository \"https://evil.example.com/org/x\" is not on an allowed host (github.com)"},
		"plain http":          {`{repo: "http://github.com/org/x", branch: main, path: p}`, "manifests.repo: repository \"http://github.com/org/x\" is not a URL of the form https://HOST/OWNER/REPO"},
		"credentials in URL":  {`{repo: "https://u:p@github.com/org/x", branch: main, path: p}`, "manifests.repo"},
		"branch with dot-dot": {`{repo: "https://github.com/org/x", branch: "a..b", path: p}`, "manifests.branch: invalid branch name \"a..b\""},
		"branch with lock":    {`{repo: "https://github.com/org/x", branch: "x.lock", path: p}`, "manifests.branch: invalid branch name \"x.lock\""},
		"branch with space":   {`{repo: "https://github.com/org/x", branch: "a b", path: p}`, "manifests.branch: invalid branch name \"a b\""},
		"control character":   {`{repo: "https://github.com/org/x", branch: "ma\u0007in", path: p}`, "manifests.branch: invalid branch name"},
		"bad key":             {`{repo: "https://github.com/org/x", branch: main, path: p, "a b": x}`, `manifests.a b: invalid key "a b"`},
		"long value":          {`{repo: "https://github.com/org/x", branch: main, path: p, extra: "` + strings.Repeat("x", 513) + `"}`, "manifests.extra: value is 513 bytes long, at most 512 are allowed"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			w := strings.Replace(workload("api", "bad", "./x"), `{repo: "https://github.com/org/api-gitops", branch: main, path: "./x"}`, c.manifests, 1)
			w += "    - name: good\n      environment: dev\n      manifests: {repo: \"https://github.com/org/x\", branch: main, path: ./good}\n"
			snap := Load(tenancyInputs(map[string]string{"w.yaml": w}, map[string]string{"none.yaml": ""}))
			require.Equal(t, []string{"api-good@team-a"}, targetNames(snap), "only the bad target is held back")
			require.Contains(t, snap.Errors.Error(), "wl:org/app-a/main/deploy/w.yaml:9: Workload \"api\": spec.deploymentTargets[0]."+c.want)
		})
	}
}

// Real values are accepted as the reference accepts them: version constraints, URLs, --set
// strings, lists, paths with spaces, unicode, quotes, braces and release branches.
func TestRealWorkloadValuesAreAccepted(t *testing.T) {
	manifests := `{repo: "https://github.com/org/x", branch: "release/2024.06+hotfix", path: "./charts/my app/ünïcode",
        chart: "oci://registry.example.com/charts/app", version: ">=2.3.0 <3.0.0", pin: "^1.4.0",
        set: "replicas=2,tier=web", valuesFiles: "values-common.yaml values-west.yaml", values: "s3://bucket/values.yaml",
        description: "Grafana dashboards: west region #2, \"beta\"", alert: "{{ $labels.instance }} is down", empty: ""}`
	w := strings.Replace(workload("api", "dev", "./x"), `{repo: "https://github.com/org/api-gitops", branch: main, path: "./x"}`, manifests, 1)
	snap := Load(tenancyInputs(map[string]string{"w.yaml": w}, map[string]string{"none.yaml": ""}))
	require.Empty(t, snap.Errors)
	require.Equal(t, []string{"api-dev@team-a"}, targetNames(snap))
	require.Equal(t, ">=2.3.0 <3.0.0", snap.Targets[0].Manifests["version"])
}

// A file above the size limit is an error at its path and is not parsed.
func TestFileSizeLimit(t *testing.T) {
	in := tenancyInputs(map[string]string{"w.yaml": workload("api", "dev", "./api"), "huge.yaml": "# " + strings.Repeat("x", 2<<20)}, nil)
	snap := Load(in)
	require.Contains(t, snap.Errors.Error(), "wl:org/app-a/main/deploy/huge.yaml: file is larger than the limit: 2097154 bytes, limit 1048576 (setting sources.maxFileBytes)")
	require.True(t, snap.Incomplete, "objects of the unread file are unknown: nothing is removed")
	require.Equal(t, []string{"api-dev@team-a"}, targetNames(snap))
}

// When two registrations deliver the same Workload name, the older registration keeps it and
// the newer one gets the error, whatever their names.
func TestOlderRegistrationKeepsItsNames(t *testing.T) {
	victim := map[string]string{"w.yaml": workload("api", "dev", "./victim")}
	attacker := map[string]string{"w.yaml": workload("api", "dev", "./attacker")}
	for name, c := range map[string]struct {
		ages      map[string]int64
		wantPath  string
		loserFile string
	}{
		"team-b older": {map[string]int64{"team-a": 200, "team-b": 100}, "./attacker", "wl:org/app-a/"},
		"team-a older": {map[string]int64{"team-a": 100, "team-b": 200}, "./victim", "wl:org/app-b/"},
	} {
		t.Run(name, func(t *testing.T) {
			in := tenancyInputs(victim, attacker)
			in.Seniority = func(r *WorkloadRegistration) int64 { return c.ages[r.Name] }
			snap := Load(in)
			require.Len(t, snap.Targets, 1)
			require.Equal(t, c.wantPath, snap.Targets[0].Manifests["path"])
			require.Contains(t, snap.Errors.Error(), c.loserFile+"main/deploy/w.yaml:1: Workload \"api\": Workload \"api\" is also defined at")
		})
	}
	snap := Load(tenancyInputs(victim, attacker))
	require.Empty(t, snap.Targets, "without history, neither registration gets the name")
	require.True(t, snap.Incomplete, "both keep their last output: nothing is removed")
	msgs := snap.Errors.Error()
	require.Contains(t, msgs, `wl:org/app-a/main/deploy/w.yaml:1: Workload "api": Workload "api" is also produced at wl:org/app-b/main/deploy/w.yaml:1 (registration "team-b"); without the control plane's history to tell which registration is older, neither is rendered`)
	require.Contains(t, msgs, `wl:org/app-b/main/deploy/w.yaml:1: Workload "api": Workload "api" is also produced at wl:org/app-a/main/deploy/w.yaml:1 (registration "team-a")`)
}

// Target names can collide across workloads (a-b + c and a + b-c): the older registration
// keeps the name there too.
func TestOlderRegistrationKeepsTargetNames(t *testing.T) {
	in := tenancyInputs(map[string]string{"w.yaml": workload("a", "b-c", "./victim")}, map[string]string{"w.yaml": workload("a-b", "c", "./attacker")})
	in.Seniority = func(r *WorkloadRegistration) int64 { return map[string]int64{"team-a": 1, "team-b": 0}[r.Name] }
	snap := Load(in)
	require.Len(t, snap.Targets, 1)
	require.Equal(t, "a-b-c@team-b", targetNames(snap)[0])
	require.Contains(t, snap.Errors.Error(), `deployment target name "a-b-c" is also produced at wl:org/app-b/`)
}

// The history is read only for registrations that share a name with another one.
func TestSeniorityIsAskedOnlyOnACollision(t *testing.T) {
	var asked []string
	count := func(r *WorkloadRegistration) int64 { asked = append(asked, r.Name); return 0 }
	in := tenancyInputs(map[string]string{"w.yaml": workload("api", "dev", "./a")}, map[string]string{"w.yaml": workload("web", "dev", "./b")})
	in.Seniority = count
	Load(in)
	require.Empty(t, asked, "no shared name: no history read")
	in = tenancyInputs(map[string]string{"w.yaml": workload("api", "dev", "./a")}, map[string]string{"w.yaml": workload("api", "dev", "./b")})
	in.Seniority = count
	Load(in)
	require.ElementsMatch(t, []string{"team-a", "team-b"}, asked)
}

// configSchemas are JSON-schema documents, kept whole on the target (its own, then the
// Workload's) and bounded in size and number.
func TestWorkloadConfigSchemasAreDocuments(t *testing.T) {
	doc := `{"type": "object", "required": ["REGION"]}`
	w := workload("api", "dev", "./api") + "      configSchemas: ['" + doc + "']\n  configSchemas: ['{\"type\": \"object\"}']\n"
	none := map[string]string{"none.yaml": ""}
	snap := Load(tenancyInputs(map[string]string{"w.yaml": w}, none))
	require.Empty(t, snap.Errors)
	require.Equal(t, []string{doc, `{"type": "object"}`}, snap.Targets[0].ConfigSchemas)

	huge := `{"description": "` + strings.Repeat("x", 70<<10) + `"}`
	w = workload("api", "dev", "./api") + "      configSchemas: ['" + huge + "']\n"
	snap = Load(tenancyInputs(map[string]string{"w.yaml": w}, none))
	require.Empty(t, snap.Targets)
	require.Contains(t, snap.Errors.Error(), sprintf("spec.deploymentTargets[0].configSchemas[0]: the schema is %d bytes long, at most 65536 are allowed", len(huge)))

	many := workload("api", "dev", "./api") + "      configSchemas: [" + strings.TrimSuffix(strings.Repeat("'{}', ", 17), ", ") + "]\n"
	snap = Load(tenancyInputs(map[string]string{"w.yaml": many}, none))
	require.Contains(t, snap.Errors.Error(), "spec.deploymentTargets[0].configSchemas: 17 schemas, at most 16 are allowed")
}
