package render_test

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// compiledEnv is boundedEnv with tpl as both templates and richer platform config values:
// nested maps and lists of every scalar type, braces, literal placeholders.
func compiledEnv(tpl string) scheduling.Inputs {
	in := boundedEnv(tpl, tpl)
	env := string(in.Env.FS.(fstest.MapFS)["env.yaml"].Data)
	env = strings.Replace(env, "  DB: postgres://admin:s3cret@db\n", `  DB: postgres://admin:s3cret@db
  NESTED: "{a: 1, b: true, c: 1.5, d: null, e: [1, two], f: {g: h, i: {j: k}}, l: 'x {{ .Namespace }}'}"
  NUMBER: "42"
  LIST: "[a, b]"
  BRACES: "'{{ literal \"{{ not a template }}\" }}'"
  LITERAL: "{{ literal \"{{ .Namespace }}\" }}"
`, 1)
	in.Env.FS = fstest.MapFS{"env.yaml": {Data: []byte(env)}}
	workload := `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: app, labels: {tier: web}}
spec:
  deploymentTargets:
    - {name: a, environment: dev, labels: {size: s}, manifests: {repo: https://github.com/org/app, branch: main, path: a/x}}
    - {name: b, environment: dev, manifests: {repo: https://github.com/org/app, branch: main, path: b}}
`
	in.Workloads = scheduling.TreeWorkloads(fstest.MapFS{"org/app/main/deploy/w.yaml": {Data: []byte(workload)}}, "wl:")
	return in
}

// TestCompiledManifestsMatchTextTemplate renders templates of every shape the compiled
// executor takes, and some it leaves to text/template at compile time or while running, with
// both paths: outputs, failures and errors are the same.
func TestCompiledManifestsMatchTextTemplate(t *testing.T) {
	cases := []string{
		"name: {{ .DeploymentTargetName }}\nns: {{ .Namespace }}\nenv: {{ .Environment }}\nws: {{ .Workspace }}\nwl: {{ .Workload }}\nct: {{ .ClusterType }}",
		"size: {{ .Labels.size }}\nmissing: {{ .Labels.missing }}\nall: {{ .Labels }}\nmanifests: {{ .Manifests }}\npath: {{ .Manifests.path }}",
		"db: {{ .ConfigData.DB }}\nmissing: {{ .ConfigData.missing }}\nns: {{ .ConfigData.NS }}\nnumber: {{ .ConfigData.NUMBER }}\nlist: {{ .ConfigData.LIST }}",
		"a: {{ .ConfigData.NESTED.a }} b: {{ .ConfigData.NESTED.b }} c: {{ .ConfigData.NESTED.c }} d: {{ .ConfigData.NESTED.d }}",
		"e: {{ .ConfigData.NESTED.e }} f: {{ .ConfigData.NESTED.f }} j: {{ .ConfigData.NESTED.f.i.j }} x: {{ .ConfigData.NESTED.f.x }} l: {{ .ConfigData.NESTED.l }}",
		"braces: {{ .ConfigData.BRACES }}\nliteral: {{ .ConfigData.LITERAL }}",
		"all: {{ .ConfigData }}",
		"data:\n{{ toYaml .ConfigData | indent 2 }}\n{{ stringify .ConfigData | nindent 4 }}",
		"labels:{{ toYaml .Labels | nindent 2 }}\n{{ toYaml .Labels.missing }}\n{{ stringify .ConfigData.NESTED.f }}\n{{ toYaml .Manifests.path }}",
		"{{- /* a comment */ -}}\n  trimmed: {{- .Namespace -}}  \n",
		"",
		// Left to text/template while running: the same error either way.
		"bad: {{ .ConfigData.DB.x }}",
		"nil: {{ .ConfigData.NESTED.d.x }}",
		"deep: {{ .ConfigData.NESTED.x.y }}",
		"big: {{ .ConfigData.BIG }}{{ .ConfigData.BIG }}{{ .ConfigData.BIG }}",
		"yaml: {{ toYaml .ConfigData.BIG | indent 100000 }}",
		// Left to text/template when compiling.
		"{{ .Namespace.x }} {{ .Labels.a.b }} {{ .Nope }}",
		"{{ $.Namespace }} {{ .ConfigData | toYaml }} {{ toYaml .ConfigData | indent 2 | quote }}",
		"{{ range .Labels }}{{ . }}{{ end }}{{ define \"x\" }}{{ end }}",
	}
	limits := render.Limits{MaxAssignmentBytes: 300_000}
	for _, tpl := range cases {
		snap := scheduling.Load(compiledEnv(tpl))
		compiled := render.Environment(snap, render.WithLimits(limits))
		text := render.Environment(snap, render.WithLimits(limits), render.WithTextTemplateOnly())
		requireSameResult(t, text, compiled, tpl)
	}
}

// TestCompiledManifestsRun makes sure the comparisons compare something: simple templates do
// run compiled, with the same output, and never with WithTextTemplateOnly.
func TestCompiledManifestsRun(t *testing.T) {
	snap := scheduling.Load(compiledEnv("name: {{ .DeploymentTargetName }}\ndata: {{ toYaml .Labels | indent 2 }}"))
	e := render.NewEngine(snap)
	text := render.NewEngine(snap, render.WithTextTemplateOnly())
	list := scheduling.Schedule(snap)
	require.Len(t, list, 4)
	for _, a := range list {
		got, err := e.Render(a)
		require.Nil(t, err)
		want, err := text.Render(a)
		require.Nil(t, err)
		require.Equal(t, want, got)
	}
	require.Equal(t, 3*len(list), render.CompiledRuns(e), "three templates of one manifest per assignment")
	require.Zero(t, render.CompiledRuns(text))
}

// TestCompiledFleetMatchesTextTemplate renders the bench fleet (with its canary template)
// with both paths.
func TestCompiledFleetMatchesTextTemplate(t *testing.T) {
	f := fleet.New(fleet.Spec{ClusterTypes: 6, Workloads: 5, TargetsPerWorkload: 3, Configs: 5, Policies: 4})
	_, err := f.AddCanary(2)
	require.NoError(t, err)
	snap := scheduling.Load(f.Inputs())
	requireSameResult(t, render.Environment(snap, render.WithTextTemplateOnly()), render.Environment(snap), "fleet")
}

// TestCompiledComposedConfigWithinLimits renders composed config formatted and indented (text
// a compiled manifest keeps per composed config and charges per assignment) under function and
// output budgets from too small for any of it to ample, with both paths: the same outputs and
// the same limit errors at every size.
func TestCompiledComposedConfigWithinLimits(t *testing.T) {
	tpl := "data:\n{{ toYaml .ConfigData | indent 2 }}\n{{ stringify .ConfigData | nindent 4 }}\n{{ toYaml .ConfigData | indent 2 }}"
	in := compiledEnv(tpl)
	env := in.Env.FS.(fstest.MapFS)["env.yaml"]
	big := regexp.MustCompile(`(?m)^  BIG: .*\n`) // nested rendering, slow and beside the point here
	env.Data = big.ReplaceAll(env.Data, nil)
	snap := scheduling.Load(in)
	huge := render.Environment(snap, render.WithLimits(render.Limits{MaxFunctionBytes: 1 << 30}))
	require.Empty(t, huge.Failed)
	largest := 0
	for _, files := range huge.Outputs.All() {
		largest = max(largest, len(files.Map()[render.ReconcilerFile]))
	}
	failed, rendered := map[string]int{}, 0
	for step := 1; step <= 40; step++ {
		size := step*largest/4 + step%7 // the three files' output and functions, at most about 10 × largest
		for _, limits := range []render.Limits{{MaxFunctionBytes: size}, {MaxAssignmentBytes: size}} {
			compiled := render.Environment(snap, render.WithLimits(limits))
			text := render.Environment(snap, render.WithLimits(limits), render.WithTextTemplateOnly())
			requireSameResult(t, text, compiled, tpl)
			for _, err := range compiled.Failed {
				for _, setting := range []string{render.SettingMaxFunctionBytes, render.SettingMaxAssignmentBytes} {
					if strings.Contains(err.Msg, setting) {
						failed[setting]++
					}
				}
			}
			rendered += compiled.Outputs.Len()
		}
	}
	require.Positive(t, failed[render.SettingMaxFunctionBytes], "some function budgets are too small")
	require.Positive(t, failed[render.SettingMaxAssignmentBytes], "some output budgets are too small")
	require.Positive(t, rendered, "some budgets are large enough")
}

// TestCompiledRenderAllocations counts what rendering an assignment of the bench fleet
// allocates once the engine has seen its cluster type and deployment target: its namespace
// and its files, nothing per step (no value boxed, no indented config text made again, no
// selection key); and nothing is made for text/template, which it does not run.
func TestCompiledRenderAllocations(t *testing.T) {
	snap := scheduling.Load(fleet.Generate(fleet.Spec{ClusterTypes: 4, Workloads: 2, TargetsPerWorkload: 3, Configs: 5, Policies: 4}))
	e := render.NewEngine(snap)
	list := scheduling.Schedule(snap)
	require.NotEmpty(t, list)
	renderAll := func() {
		for _, a := range list {
			if _, err := e.Render(a); err != nil {
				t.Fatal(err)
			}
		}
	}
	renderAll()
	// AllocsPerRun counts the whole process's allocations, and goroutines an earlier test left
	// (workers past a deadline) may still allocate: the fewest of a few measurements counts.
	allocs := math.Inf(1)
	for range 5 {
		allocs = min(allocs, testing.AllocsPerRun(2, renderAll)/float64(len(list)))
	}
	require.LessOrEqual(t, allocs, 2.0, "allocations per assignment: its namespace and its files")
	manifests := 0
	for _, a := range list {
		for _, name := range []string{a.ClusterType.Spec.Reconciler, a.ClusterType.Spec.NamespaceService, a.ClusterType.Spec.ConfigType} {
			manifests += len(snap.Templates[name].Spec.Manifests)
		}
	}
	require.Equal(t, (1+5*(1+2))*manifests, render.CompiledRuns(e), "every manifest ran compiled, in each run of AllocsPerRun (one more each time) and the one before")
	require.Zero(t, render.TextTemplateSetUps(e), "nothing made for text/template")
	text := render.NewEngine(snap, render.WithTextTemplateOnly())
	_, err := text.Render(list[0])
	require.Nil(t, err)
	require.Equal(t, 1, render.TextTemplateSetUps(text))
}
