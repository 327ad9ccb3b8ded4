package render_test

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// boundedEnv is an environment of two cluster types, "bomb" and "fine", whose templates are
// given, and a platform config with a secret and a nested template.
func boundedEnv(bombTemplate, fineTemplate string) scheduling.Inputs {
	env := `apiVersion: scheduler.kalypso.io/v1alpha1
kind: GitOpsRepo
metadata: {name: dev}
spec: {repo: https://github.com/org/gitops, branch: dev, path: .}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: bomb}
spec: {reconciler: bomb, namespaceService: fine, configType: fine}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: fine}
spec: {reconciler: fine, namespaceService: fine, configType: fine}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata: {name: bomb}
spec:
  type: reconciler
  manifests:
    - |
` + indentText(bombTemplate, "      ") + `
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata: {name: fine}
spec:
  type: reconciler
  manifests:
    - |
` + indentText(fineTemplate, "      ") + `
---
apiVersion: v1
kind: ConfigMap
metadata: {name: platform, labels: {platform-config: "true"}}
data:
  DB: postgres://admin:s3cret@db
  NS: 'ns={{ .Namespace }}'
  NAME: 'name={{ .DeploymentTargetName }}'
  BIG: '{{ range until 5000 }}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{{ end }}'
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata: {name: app}
spec: {workload: {repo: https://github.com/org/app, branch: main, path: deploy}, workspace: team}
`
	workload := `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: app, labels: {tier: web}}
spec:
  deploymentTargets:
    - {name: a, environment: dev, labels: {size: s}, manifests: {repo: https://github.com/org/app, branch: main, path: a}}
    - {name: b, environment: dev, manifests: {repo: https://github.com/org/app, branch: main, path: b}}
`
	return scheduling.Inputs{
		Environment: "dev",
		Env:         scheduling.Source{FS: fstest.MapFS{"env.yaml": {Data: []byte(env)}}, Prefix: "dev:"},
		Workloads:   scheduling.TreeWorkloads(fstest.MapFS{"org/app/main/deploy/w.yaml": {Data: []byte(workload)}}, "wl:"),
	}
}

func indentText(s, pad string) string {
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// TestEnvironmentDeadline: a template that would run for minutes makes the environment's
// render return soon after render.timeout, every assignment it kept from rendering failed
// with an error naming the setting.
func TestEnvironmentDeadline(t *testing.T) {
	in := boundedEnv(`{{ $l := until 10000 }}{{ range $l }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}{{ end }}`, `name: {{ .DeploymentTargetName }}`)
	start := time.Now()
	res := render.Environment(scheduling.Load(in), render.WithLimits(render.Limits{Timeout: time.Second}))
	require.Less(t, time.Since(start), 30*time.Second)
	for _, key := range []string{"bomb/app-a", "bomb/app-b"} {
		require.Contains(t, res.Failed, key)
		assert.Contains(t, res.Failed[key].Msg, render.SettingTimeout)
	}
	require.NotEmpty(t, res.Errors)
	assert.Contains(t, res.Errors.Sorted()[0].Error(), render.SettingTimeout)
}

// TestEnvironmentBombsFailTheirAssignmentsOnly: a bomb that fails on a function or output
// limit fails the assignments of its cluster type, at the template's file and line, and the
// other cluster type renders.
func TestEnvironmentBombsFailTheirAssignmentsOnly(t *testing.T) {
	cases := map[string]struct{ bomb, setting string }{
		"repeat":  {"a: 1\nb: {{ repeat 1500000000 \"x\" | len }}", render.SettingMaxFunctionBytes},
		"until":   {"a: 1\nb: {{ range until 30000 }}{{ end }}", render.SettingMaxListLength},
		"nested":  {"a: 1\nb: {{ range until 10000 }}{{ range until 10000 }}{{ end }}{{ end }}", render.SettingMaxFunctionBytes},
		"output":  {"a: 1\nb: {{ range until 100 }}{{ $.ConfigData.BIG }}{{ end }}", render.SettingMaxAssignmentBytes},
		"config":  {"a: 1\nb: {{ .ConfigData.BIG }}", render.SettingMaxAssignmentBytes},
		"printf":  {"a: 1\nb: {{ printf \"%099999999999d\" 1 }}", render.SettingMaxFunctionBytes},
		"nindent": {"a: 1\nb: {{ nindent 2000000000 \"x\" }}", render.SettingMaxFunctionBytes},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			res := render.Environment(scheduling.Load(boundedEnv(c.bomb, `name: {{ .DeploymentTargetName }}`)),
				render.WithLimits(render.Limits{MaxAssignmentBytes: 100_000}))
			for _, key := range []string{"bomb/app-a", "bomb/app-b"} {
				require.Contains(t, res.Failed, key)
				err := res.Failed[key]
				assert.Contains(t, err.Msg, c.setting)
				assert.Equal(t, "dev:env.yaml", err.Pos.File)
				assert.Equal(t, scheduling.ObjectRef(scheduling.KindTemplate, "bomb"), err.Object)
			}
			assert.Equal(t, "name: app-a\n", string(res.Outputs.Map()["fine/app-a"].File(render.ReconcilerFile)))
		})
	}
}

// TestNestedConfigValuesStillRender: `{{` in platform config values keeps the reference's
// nested rendering, within the output limit.
func TestNestedConfigValuesStillRender(t *testing.T) {
	res := render.Environment(scheduling.Load(boundedEnv(`x: 1`, "{{ .ConfigData.NS }} {{ .ConfigData.NAME }} {{ .ConfigData.BIG }}")))
	require.Empty(t, res.Errors)
	out := string(res.Outputs.Map()["fine/app-a"].File(render.ReconcilerFile))
	assert.Equal(t, "ns=dev-fine-app-a name=app-a "+strings.Repeat("x", 200_000)+"\n", out)
}

// hostileValues are workload values that try to run templates in a later pass, to forge the
// placeholders of `literal`, or to form `{{` next to other text.
var hostileValues = []string{
	`{{ .ConfigData.DB }}`,
	`{{ .ConfigData | toYaml | b64enc }}`,
	`{{ range until 30000 }}{{ range until 30000 }}{{end}}{{end}}`,
	`{{ repeat 1500000000 "x" | len }}`,
	"\uE000\uE000 .ConfigData.DB \uE001\uE001",
	"\uE002\uE003\uE002\uE003 .ConfigData.DB \uE002\uE004\uE002\uE004",
	"{",
	"{ .ConfigData.DB }}",
	"}}{{",
	`{{ literal "{{" }} .ConfigData.DB }}`,
}

// allFieldsTemplate prints every value of the template data that can come from a workload
// repository, then a platform config value that prints one of them in a nested pass.
const allFieldsTemplate = `n={{ .DeploymentTargetName }}|ns={{ .Namespace }}|w={{ .Workload }}|s={{ .Workspace }}|e={{ .Environment }}
{{ range $k, $v := .Labels }}l:{{ $k }}={{ $v }}
{{ end }}{{ range $k, $v := .Manifests }}m:{{ $k }}={{ $v }}
{{ end }}{{ .Labels.size }}{{ .Manifests.path }}|{{ .ConfigData.NAME }}`

// TestWorkloadValuesAreNeverExecuted renders, from a snapshot built directly (no validation
// in between), assignments whose every workload-originated value is hostile: nothing is
// executed, the platform's config does not leak, and each value comes out verbatim.
func TestWorkloadValuesAreNeverExecuted(t *testing.T) {
	snap := scheduling.Load(boundedEnv(`x: 1`, allFieldsTemplate))
	require.Empty(t, snap.Errors)
	engine := render.NewEngine(snap, render.WithLimits(render.Limits{Timeout: 10 * time.Second}))
	var base *scheduling.Assignment
	for _, a := range scheduling.Schedule(snap) {
		if a.Key() == "fine/app-a" {
			base = a
		}
	}
	require.NotNil(t, base)
	for _, v := range hostileValues {
		for _, field := range []string{"name", "environment", "workload", "workspace", "labelKey", "labelValue", "manifestKey", "repo", "branch", "path"} {
			a := hostile(base, field, v)
			start := time.Now()
			files, err := engine.Render(a)
			require.Nil(t, err, "%s = %q", field, v)
			require.Less(t, time.Since(start), 5*time.Second)
			out := string(files.File(render.ReconcilerFile))
			assert.NotContains(t, out, "s3cret", "%s = %q", field, v)
			assert.Contains(t, out, v, "%s = %q comes out verbatim", field, v)
			if field == "name" {
				assert.Contains(t, out, "name="+v, "the nested pass prints the value and does not execute it")
			}
		}
	}
}

// TestAdjacentWorkloadValuesFormNoDelimiter: a value ending in `{` next to one starting
// with `{` gives `{{` only in the final text, never in a pass.
func TestAdjacentWorkloadValuesFormNoDelimiter(t *testing.T) {
	snap := scheduling.Load(boundedEnv(`x: 1`, allFieldsTemplate))
	var base *scheduling.Assignment
	for _, a := range scheduling.Schedule(snap) {
		if a.Key() == "fine/app-a" {
			base = a
		}
	}
	a := hostile(hostile(base, "labelValue", "x{"), "path", "{ .ConfigData.DB }}")
	files, err := render.NewEngine(snap).Render(a)
	require.Nil(t, err)
	out := string(files.File(render.ReconcilerFile))
	assert.Contains(t, out, "x{{ .ConfigData.DB }}")
	assert.NotContains(t, out, "s3cret")
}

// hostile returns a copy of a with one workload-originated value set to v.
func hostile(a *scheduling.Assignment, field, v string) *scheduling.Assignment {
	dt := *a.Target
	dt.Labels = cloneMap(dt.Labels)
	dt.Manifests = cloneMap(dt.Manifests)
	switch field {
	case "name":
		dt.Name = v
	case "environment":
		dt.Environment = v
	case "workload":
		dt.Labels["workload"] = v
	case "workspace":
		dt.Labels["workspace"] = v
	case "labelKey":
		dt.Labels[v] = "k"
	case "labelValue":
		dt.Labels["size"] = v
	case "manifestKey":
		dt.Manifests[v] = "k"
	default:
		dt.Manifests[field] = v
	}
	return &scheduling.Assignment{ClusterType: a.ClusterType, Target: &dt, Policies: a.Policies}
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
