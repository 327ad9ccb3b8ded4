package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// docSchema compiles one of the published schemas of docs/schemas (both are loaded, since plan's
// refers to validate's).
func docSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	const base = "https://github.com/kalypso-gitops/kalypso/docs/schemas/"
	for _, n := range []string{"validate", "plan"} {
		f, err := os.Open(filepath.Join("..", "..", "docs", "schemas", n+".schema.json"))
		require.NoError(t, err)
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		require.NoError(t, err)
		require.NoError(t, c.AddResource(base+n+".schema.json", doc))
	}
	s, err := c.Compile(base + name + ".schema.json")
	require.NoError(t, err)
	return s
}

// decodeAgainst checks the output against the published schema and decodes it.
func decodeAgainst(t *testing.T, schema, stdout string, v any) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(stdout))
	require.NoError(t, err, stdout)
	require.NoError(t, docSchema(t, schema).Validate(inst), stdout)
	require.NoError(t, json.Unmarshal([]byte(stdout), v))
}

func TestValidateJSON(t *testing.T) {
	f := newFleetFixture(t)
	code, stdout, stderr := runCLI(t, append([]string{"validate", "--output", "json"}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	var ok validateReport
	decodeAgainst(t, "validate", stdout, &ok)
	require.True(t, ok.Valid)
	require.Equal(t, "dev", ok.Environment)
	require.Positive(t, ok.Assignments)
	require.Empty(t, ok.Errors)

	f.edit(t, "env", "cluster-types/west-us/large/large-cluster-type.yaml", "reconciler:", "reconciler: x\n  reconcilr:")
	code, stdout, _ = runCLI(t, append([]string{"validate", "--output", "json"}, f.args()...)...)
	require.Equal(t, 1, code)
	var bad validateReport
	decodeAgainst(t, "validate", stdout, &bad)
	require.False(t, bad.Valid)
	require.NotEmpty(t, bad.Errors)
	e := bad.Errors[0]
	require.Equal(t, filepath.Join(f.env, "cluster-types/west-us/large/large-cluster-type.yaml"), e.File)
	require.Positive(t, e.Line)
	require.Equal(t, `ClusterType "large"`, e.Object)
	require.Equal(t, e.File+":"+strconv.Itoa(e.Line)+": "+e.Object+": "+e.Message, e.Text)

	code, _, stderr = runCLI(t, append([]string{"validate", "--output", "yaml"}, f.args()...)...)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `flag --output: "yaml" is not text or json`)
}

func TestPlanJSON(t *testing.T) {
	f, out := guardFixture(t, "    maxRemoved: 10%\n")
	f.edit(t, "env", "cluster-types/west-us/west-us-config.yaml", "mysql://west:8806/mysql2", "mysql://west:8806/mysql3")
	code, stdout, stderr := runCLI(t, append([]string{"plan", "--output", "json", "--diff", "--gitops-dir", out}, f.args()...)...)
	require.Equal(t, 0, code, stderr)
	var rep planReport
	decodeAgainst(t, "plan", stdout, &rep)
	require.Equal(t, planCounts{Changed: 4}, rep.Files)
	require.Len(t, rep.Groups, 4)
	g := rep.Groups[0]
	require.Equal(t, "large", g.ClusterType)
	require.Equal(t, "observability-grafana", g.DeploymentTarget)
	require.Equal(t, []planChange{{Path: "large/observability-grafana/platform-config.yaml", Change: "changed"}}, g.Files)
	require.NotNil(t, g.Diff)
	require.Contains(t, *g.Diff, "-  DATABASE_URL: mysql://west:8806/mysql2\n+  DATABASE_URL: mysql://west:8806/mysql3\n")
	require.Equal(t, 4, rep.BlastRadius.Changed)
	require.True(t, rep.BlastRadius.Allowed)
	require.Empty(t, rep.BlastRadius.Violations)

	require.NoError(t, os.Remove(filepath.Join(f.env, "scheduling/small-policy.yaml")))
	code, stdout, _ = runCLI(t, append([]string{"plan", "--output", "json", "--gitops-dir", out}, f.args()...)...)
	require.Equal(t, 1, code, "over the guard")
	rep = planReport{}
	decodeAgainst(t, "plan", stdout, &rep)
	require.Nil(t, rep.Groups[0].Diff, "no diff without --diff")
	require.False(t, rep.BlastRadius.Allowed)
	require.Len(t, rep.BlastRadius.Violations, 1)
	v := rep.BlastRadius.Violations[0]
	require.Equal(t, "maxRemoved", v.Limit)
	require.Equal(t, "10%", v.Value)
	require.Equal(t, rep.BlastRadius.Removed, v.Measured)
	require.Contains(t, v.Message, "the change removes ")

	code, stdout, _ = runCLI(t, append([]string{"plan", "--output", "json", "--accept-blast-radius", "--gitops-dir", out}, f.args()...)...)
	require.Equal(t, 0, code)
	rep = planReport{}
	decodeAgainst(t, "plan", stdout, &rep)
	require.True(t, rep.BlastRadius.Accepted)
	require.True(t, rep.BlastRadius.Allowed)
}
