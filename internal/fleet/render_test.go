package fleet

import (
	"strings"
	"testing"
	"text/template"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// configProbe prints the composed config in every way a template can; the engine answers
// toYaml and stringify of composed config from a cache, which must not change a byte.
const configProbe = `{{ toYaml .ConfigData }}
{{ stringify .ConfigData }}
{{ toYaml .ConfigData.FEATURES }}
{{ toYaml (dict "namespace" .Namespace) }}
{{ .ConfigData.REGION }}`

func TestCachedConfigYAMLMatchesDirectRendering(t *testing.T) {
	f := New(Spec{ClusterTypes: 7, Workloads: 3, TargetsPerWorkload: 2, Configs: 9, Policies: 3})
	f.Main["templates/scheduler_v1alpha1_template_configmap.yaml"] = file(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata:
  name: configmap
spec:
  type: config
  manifests:
    - |
` + indent(configProbe, "      ") + "\n")
	snap := scheduling.Load(f.Inputs())
	res := render.Environment(snap)
	require.Empty(t, res.Errors)
	require.Equal(t, f.Assignments(), res.Outputs.Len())

	var sources []render.ConfigSource
	for _, cm := range snap.ConfigMaps {
		sources = append(sources, render.ParseConfigMap(cm.Name, cm.Labels, cm.Data))
	}
	direct := template.Must(template.New("probe").Funcs(render.FuncMap()).Parse(configProbe + "\n"))
	outputs := res.Outputs.Map()
	for _, a := range res.Assignments {
		ct, dt := a.ClusterType, a.Target
		data := map[string]any{
			"Namespace":  a.Namespace(),
			"ConfigData": render.Compose(sources, nil, ct.Name, ct.Labels, dt.Name, dt.Labels),
		}
		var want strings.Builder
		require.NoError(t, direct.Execute(&want, data))
		require.Equal(t, want.String(), string(outputs[a.Key()].File(render.ConfigFileYAML)), a.Key())
	}
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
