package render_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// mutatingEnv is the placement environment with a platform config of a nested value and a
// text that, rendered into a manifest, is rendered again (nested) and calls set; its reconciler
// template writes into the config data with set, directly and into a nested value, and its
// config template prints what it sees.
func mutatingEnv(t *testing.T) *scheduling.Snapshot {
	t.Helper()
	return mutatingEnvWith(t, "kind: ConfigMap\ndata:\n  before: \"{{ .ConfigData.nested.a }}\"\n"+
		"  {{- $_ := set .ConfigData \"x\" .DeploymentTargetName }}{{ $_ := set .ConfigData.nested \"a\" .DeploymentTargetName }}\n"+
		"  mine: \"{{ .ConfigData.x }}/{{ .ConfigData.nested.a }}\"\n  later: \"{{ .ConfigData.later }}\"\n")
}

// mutatingEnvWith is mutatingEnv with the reconciler template's manifest rec.
func mutatingEnvWith(t *testing.T, rec string) *scheduling.Snapshot {
	t.Helper()
	platform := `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: platform
  labels: {platform-config: "true"}
data:
  nested: "a: one"
  later: "{{ $_ := set .ConfigData \"y\" .DeploymentTargetName }}set"
`
	return placementEnvWith(t, rec, "v", platform, "kind: ConfigMap\ndata:\n  seen: \"{{ .ConfigData.x }}/{{ .ConfigData.y }}/{{ .ConfigData.nested.a }}\"\n")
}

// TestTemplatesChangeOnlyTheirOwnConfigData checks that a template writing into the config data
// (sprig's set, directly, into a nested value, and from a nested rendering) changes only what
// its own assignment sees, as in the reference: the assignment's later templates see the change;
// the other assignment, sharing the config, sees it unchanged, whichever renders first, and so
// does every later render.
func TestTemplatesChangeOnlyTheirOwnConfigData(t *testing.T) {
	snap := mutatingEnv(t)
	mine := regexp.MustCompile(`mine: "([^"/]+)/([^"]+)"`)
	check := func(res *render.Result) {
		t.Helper()
		require.Empty(t, res.Errors)
		require.Equal(t, 2, res.Outputs.Len())
		names := map[string]bool{}
		for key, files := range res.Outputs.All() {
			rec := string(files.File(render.ReconcilerFile))
			require.Contains(t, rec, `before: "one"`, key)
			require.Contains(t, rec, `later: "set"`, key)
			m := mine.FindStringSubmatch(rec)
			require.NotNil(t, m, rec)
			require.Equal(t, m[1], m[2], key)
			names[m[1]] = true
			own := m[1]
			require.Contains(t, string(files.File(render.ConfigFileYAML)), `seen: "`+own+"/"+own+"/"+own+`"`, key,
				"the assignment's later template sees what its reconciler wrote, and only that")
		}
		require.Len(t, names, 2, "each assignment sees its own name")
	}
	first := render.Environment(snap)
	check(first)
	for range 5 {
		check(render.Environment(snap))
		check(render.Environment(snap, render.WithTextTemplateOnly()))
	}
	again, _ := render.Incremental(first, mutatingEnv(t))
	check(again)
	require.Equal(t, first.Outputs.Map(), again.Outputs.Map())
}

// TestANestedRenderingChangesOnlyItsOwnConfigData checks that a config value that calls set
// when it is rendered again (nested), in a manifest that calls nothing itself, changes only
// what its own assignment sees: the other assignment reads the value unset before its own
// nested rendering, and sees its own afterwards.
func TestANestedRenderingChangesOnlyItsOwnConfigData(t *testing.T) {
	snap := mutatingEnvWith(t, "kind: ConfigMap\ndata:\n  before: \"{{ .ConfigData.y }}\"\n  later: \"{{ .ConfigData.later }}\"\n")
	for range 5 {
		res := render.Environment(snap)
		require.Empty(t, res.Errors)
		require.Equal(t, 2, res.Outputs.Len())
		for key, files := range res.Outputs.All() {
			rec := string(files.File(render.ReconcilerFile))
			require.Contains(t, rec, `before: "<no value>"`, key)
			require.Contains(t, rec, `later: "set"`, key)
			target := files.File(render.ConfigFileYAML)
			require.Regexp(t, `seen: "<no value>/app-[a-z]+/one"`, string(target), key)
			require.Contains(t, string(target), "/app-"+key[len("c/app-"):]+"/", key, "its own name, not the other's")
		}
	}
}
