package render_test

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Positions a template may put a workload value in: each is one manifest of the reconciler
// template, the value read as .Manifests.value.
var positions = map[string]string{
	"plain":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  value: {{ .Manifests.value }}\n  next: kept\n",
	"double-quoted": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  value: \"{{ .Manifests.value }}\"\n  next: kept\n",
	"single-quoted": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  value: '{{ .Manifests.value }}'\n  next: kept\n",
	"in a URL":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  url: \"https://charts.example.com/{{ .Manifests.value }}/index.yaml\"\n  next: kept\n",
	"list item":     "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  args:\n    - --values\n    - {{ .Manifests.value }}\n    - --atomic\n",
	"flow list":     "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  args: [--values, {{ .Manifests.value }}, --atomic]\n",
	"block":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  notes: |\n    {{ .Manifests.value }}\n  next: kept\n",
	"quote":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  value: {{ .Manifests.value | quote }}\n  next: kept\n",
	"toYaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  {{- toYaml .Manifests | nindent 2 }}\n",
}

// placementEnv is a control plane with one cluster type whose reconciler template is the
// manifest given, and one workload target whose manifests carry value under the key "value"
// (next to repo, branch and path), plus a second target with an ordinary value.
func placementEnv(t testing.TB, manifest, value string) *scheduling.Snapshot {
	t.Helper()
	return placementEnvWith(t, manifest, value, "", "kind: ConfigMap\ndata:\n  path: \"{{ .Manifests.path }}\"\n")
}

// placementEnvWith is placementEnv with more objects on the environment branch (extraEnv, YAML
// documents) and the given manifest of its config template.
func placementEnvWith(t testing.TB, manifest, value, extraEnv, configManifest string) *scheduling.Snapshot {
	t.Helper()
	tpl, err := yaml.Marshal(map[string]any{
		"apiVersion": scheduling.APIGroupVersion, "kind": "Template", "metadata": map[string]any{"name": "rec"},
		"spec": map[string]any{"type": "reconciler", "manifests": []string{manifest}},
	})
	require.NoError(t, err)
	wl := placementWorkload(t, value)
	env := `apiVersion: scheduler.kalypso.io/v1alpha1
kind: GitOpsRepo
metadata: {name: dev}
spec: {repo: https://github.com/org/gitops, branch: dev, path: .}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: c}
spec: {reconciler: rec, namespaceService: ns, configType: cfg}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
`
	main := `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata: {name: ns}
spec:
  type: namespace
  manifests: ["kind: Namespace\nmetadata:\n  name: {{ .Namespace }}\n"]
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata: {name: cfg}
spec:
  type: config
  manifests: [` + strconv.Quote(configManifest) + `]
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata: {name: app}
spec: {workload: {repo: https://github.com/org/app, branch: main, path: deploy}, workspace: team}
`
	snap := scheduling.Load(scheduling.Inputs{
		Environment: "dev",
		Env:         scheduling.Source{FS: fstest.MapFS{"env.yaml": {Data: []byte(env + "---\napiVersion: scheduler.kalypso.io/v1alpha1\nkind: BaseRepo\nmetadata: {name: main}\nspec: {repo: https://github.com/org/cp, branch: main, path: .}\n" + extraEnv)}}, Prefix: "dev:"},
		Main:        scheduling.Source{FS: fstest.MapFS{"templates.yaml": {Data: []byte(main)}, "templates/rec.yaml": {Data: tpl}}, Prefix: "main:"},
		Workloads:   scheduling.TreeWorkloads(fstest.MapFS{"org/app/main/deploy/w.yaml": {Data: wl}}, "wl:"),
		Policy:      scheduling.Policy{ManifestHosts: []string{"github.com"}},
	})
	require.Empty(t, snap.Errors, "the inputs are valid: %v", snap.Errors)
	return snap
}

// placementWorkload is the Workload of the placement environment: target "checked" with the
// value, target "other" with an ordinary one.
func placementWorkload(t testing.TB, value string) []byte {
	t.Helper()
	target := func(name, v string) map[string]any {
		return map[string]any{"name": name, "environment": "dev", "manifests": map[string]string{
			"repo": "https://github.com/org/app-gitops", "branch": "main", "path": "./" + name, "value": v}}
	}
	wl, err := yaml.Marshal(map[string]any{
		"apiVersion": scheduling.APIGroupVersion, "kind": "Workload", "metadata": map[string]any{"name": "app"},
		"spec": map[string]any{"deploymentTargets": []any{target("checked", value), target("other", "plain-value")}},
	})
	require.NoError(t, err)
	return wl
}

// valueLine is the line of the workload file on which the checked target's value is written.
func valueLine(t *testing.T, value string) int {
	t.Helper()
	for i, l := range strings.Split(string(placementWorkload(t, value)), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "value:") {
			return i + 1
		}
	}
	t.Fatal("no value")
	return 0
}

// referenceOutput is what the reference writes for a manifest: plain text/template
// substitution with sprig's functions (and toYaml as the reference defines it).
func referenceOutput(t testing.TB, manifest string, manifests map[string]string) string {
	t.Helper()
	fm := sprig.TxtFuncMap()
	fm["toYaml"] = render.ToYaml
	p, err := template.New("m").Funcs(fm).Parse(manifest)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, p.Execute(&b, map[string]any{"Manifests": manifests}))
	return b.String()
}

// renderValue renders the placement environment both ways (compiled manifests and
// text/template only) and returns the reconciler file of the checked target, or its error.
func renderValue(t *testing.T, manifest, value string) (string, *scheduling.Error) {
	t.Helper()
	var outs []string
	var errs []*scheduling.Error
	for _, opts := range [][]render.Option{nil, {render.WithTextTemplateOnly()}} {
		res := render.Environment(placementEnv(t, manifest, value), opts...)
		require.Contains(t, res.Outputs.Map(), "c/app-other", "the other target is rendered")
		if f, ok := res.Outputs.Map()["c/app-checked"]; ok {
			outs = append(outs, string(f.File(render.ReconcilerFile)))
		}
		if e := res.Failed["c/app-checked"]; e != nil {
			errs = append(errs, e)
		}
	}
	switch {
	case len(outs) == 2:
		require.Equal(t, outs[0], outs[1], "compiled and text/template agree")
		return outs[0], nil
	case len(errs) == 2:
		require.Equal(t, errs[0].Error(), errs[1].Error(), "compiled and text/template agree")
		return "", errs[0]
	}
	t.Fatalf("compiled and text/template disagree: %v %v", outs, errs)
	return "", nil
}

// Real workload values render byte for byte as the reference renders them, quoted or not as
// the template says, and read back as themselves.
func TestRealWorkloadValuesRenderAsTheReferenceDoes(t *testing.T) {
	all := []string{"plain", "double-quoted", "single-quoted", "in a URL", "list item", "block", "quote", "toYaml"}
	cases := []struct {
		value string
		where []string
	}{
		{">=2.3.0 <3.0.0", []string{"double-quoted", "single-quoted", "in a URL", "quote", "toYaml", "block"}},
		{"^1.4.0", all},
		{"~1.2", []string{"plain", "double-quoted", "single-quoted", "quote", "toYaml", "block", "flow list"}},
		{"oci://registry.example.com/charts/app", append([]string{"flow list"}, all...)},
		{"s3://bucket/path/to/values.yaml", append([]string{"flow list"}, all...)},
		{"replicas=2,tier=web", all},
		{"values-common.yaml values-west.yaml", all},
		{"config/my values.yaml", all},
		{"Grafana dashboards for the west region", all},
		{"日本語のダッシュボード", append([]string{"flow list"}, all...)},
		{"café-ünïcode", append([]string{"flow list"}, all...)},
		{"issue #42 is fixed", []string{"double-quoted", "single-quoted", "in a URL", "quote", "toYaml", "block"}},
		{"key: value", []string{"double-quoted", "single-quoted", "in a URL", "quote", "toYaml", "block"}},
		{"it's here", []string{"plain", "double-quoted", "in a URL", "list item", "quote", "toYaml", "block"}},
		{`say "hello"`, []string{"plain", "single-quoted", "list item", "quote", "toYaml", "block"}},
		{"{{ .Values.image.tag }}", []string{"double-quoted", "single-quoted", "in a URL", "block"}},
		{"{{ $labels.instance }} is down", []string{"double-quoted", "single-quoted", "block"}},
		{"100%", append([]string{"flow list"}, all...)},
		{"@latest", []string{"double-quoted", "single-quoted", "in a URL", "quote", "toYaml", "block"}},
		{"*.example.com", []string{"double-quoted", "single-quoted", "in a URL", "quote", "toYaml", "block"}},
		{`C:\Program Files\app`, []string{"plain", "single-quoted", "list item", "quote", "toYaml", "block"}},
		{"--set image.tag=1.2.3", all},
		{"https://charts.example.com/stable?version=1.2&arch=amd64", all},
		{"[beta]", []string{"double-quoted", "single-quoted", "in a URL", "quote", "toYaml", "block"}},
		{"./prometheus", append([]string{"flow list"}, all...)},
	}
	for _, c := range cases {
		for _, where := range c.where {
			t.Run(where+"/"+c.value, func(t *testing.T) {
				manifest := positions[where]
				got, err := renderValue(t, manifest, c.value)
				require.Nil(t, err, "%v", err)
				want := referenceOutput(t, manifest, map[string]string{"repo": "https://github.com/org/app-gitops", "branch": "main", "path": "./checked", "value": c.value})
				require.Equal(t, want, got, "the reference's bytes")
				require.True(t, slices.ContainsFunc(scalars(t, got), func(s string) bool { return strings.Contains(s, c.value) }), "the value reads back as itself")
			})
		}
	}
}

// scalars returns every scalar of a YAML stream, and each line of block scalars.
func scalars(t *testing.T, text string) []string {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(text))
	var out []string
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			out = append(out, n.Value, strings.TrimSuffix(n.Value, "\n"))
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	for {
		var n yaml.Node
		if dec.Decode(&n) != nil {
			return out
		}
		walk(&n)
	}
}

// Every injection attempt is refused where it would change the structure of the YAML: an
// error on the assignment naming the value and the template's line, nothing written for it.
func TestInjectionThroughWorkloadValuesIsRefused(t *testing.T) {
	cases := []struct{ value, where, why string }{
		{"x\nevil: true", "plain", "invalid YAML"},
		{"x\n  evil: true", "plain", "a mapping of 3 keys where the template has a mapping of 2 keys"},
		{"x\nevil: true", "double-quoted", `reads back as "x evil: true"`},
		{"./p\"\n  prune: false\n---\nkind: ClusterRoleBinding", "double-quoted", "invalid YAML"},
		{"x\n---\nkind: Secret", "plain", "invalid YAML"},
		{"x\n---\nkind: Secret", "block", "invalid YAML"},
		{"x\n---\n", "plain", "2 YAML documents where the template has 1"},
		{"{{ .ConfigData.DB }}", "plain", "a mapping where the template has a scalar"},
		{"{a: b}", "plain", "a mapping where the template has a scalar"},
		{"&a anchored", "plain", "it adds the anchor &a"},
		{"*a", "plain", "invalid YAML"},
		{"x\n    - item", "list item", "a list of 4 items where the template has a list of 3 items"},
		{"x\n- item", "list item", "invalid YAML"},
		{"x, y", "flow list", "a list of 4 items where the template has a list of 3 items"},
		{"x\" # cut", "double-quoted", `reads back as "x"`},
		{"x # cut", "plain", `reads back as "x"`},
		{"x\t# cut", "plain", `reads back as "x"`},
		{"!!binary aGVsbG8=", "plain", "it adds the tag !!binary"},
		{"!!map {}", "plain", "a mapping where the template has a scalar"},
		{"|\n    evil", "plain", `reads back as "evil\n"`},
		{"'x' # c", "plain", `reads back as "x"`},
		{"{{ .Values.tag }}", "quote", "a template function changes it"},
		{"x'y", "single-quoted", "invalid YAML"},
		{`a\nb`, "double-quoted", `reads back as "a\nb"`},
		{"x\r\n  evil: 1", "plain", "a mapping of 3 keys"},
		{"x\n  evil: 1", "block", "a mapping of 3 keys"},
		{"? x", "plain", "invalid YAML"},
	}
	for _, c := range cases {
		t.Run(c.where+"/"+c.value, func(t *testing.T) {
			_, err := renderValue(t, positions[c.where], c.value)
			require.NotNil(t, err, "refused")
			require.Equal(t, scheduling.Pos{File: "wl:org/app/main/deploy/w.yaml", Line: valueLine(t, c.value)}, err.Pos, "the line of the value")
			require.Equal(t, `DeploymentTarget "app-checked"`, err.Object)
			require.Contains(t, err.Msg, "value "+strconv.Quote(c.value)+" of manifests.value cannot be placed as one YAML scalar where "+
				`Template "rec" at main:templates/rec.yaml:`+strconv.Itoa(fieldLineIn(t, positions[c.where]))+" writes it: ")
			require.Contains(t, err.Msg, c.why)
		})
	}
}

// fieldLineIn is the line of the Template file on which the action writing .Manifests.value
// is: the manifest's text starts on line 8 of the file yaml.Marshal writes.
func fieldLineIn(t *testing.T, manifest string) int {
	t.Helper()
	for i, l := range strings.Split(manifest, "\n") {
		if strings.Contains(l, ".Manifests") {
			return 8 + i
		}
	}
	t.Fatal("no action")
	return 0
}

// A long value is named by its beginning.
func TestRefusedValueIsTruncatedInTheError(t *testing.T) {
	value := strings.Repeat("long ", 40) + "\n  evil: true"
	_, err := renderValue(t, positions["plain"], value)
	require.NotNil(t, err)
	require.Contains(t, err.Msg, `value "long long long long long long long long long long long long…" of manifests.value`)
	require.Less(t, len(err.Msg), 400)
}
