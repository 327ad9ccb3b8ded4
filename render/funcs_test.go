package render

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/mitchellh/hashstructure"
	hashstructurev2 "github.com/mitchellh/hashstructure/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// execTemplate parses and executes text with FuncMap and data.
func execTemplate(t *testing.T, text string, data any) (string, error) {
	t.Helper()
	tmpl, err := template.New("t").Funcs(FuncMap()).Parse(text)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	err = tmpl.Execute(&buf, data)
	return buf.String(), err
}

func TestFuncMapRemovedFunctionsAbsent(t *testing.T) {
	fm := FuncMap()
	for _, name := range RemovedFuncs() {
		_, present := fm[name]
		assert.False(t, present, name)
		_, inSprig := sprig.TxtFuncMap()[name]
		assert.True(t, inSprig, "%s is not a sprig function", name)
		_, err := template.New("t").Funcs(fm).Parse(fmt.Sprintf("{{ %s }}", name))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), fmt.Sprintf("function %q not defined", name))
	}
}

func TestFuncMapEnvFailsToParse(t *testing.T) {
	_, err := execTemplate(t, `{{ env "GITHUB_AUTH_TOKEN" }}`, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `function "env" not defined`)
}

func TestFuncMapContents(t *testing.T) {
	fm := FuncMap()
	sp := sprig.TxtFuncMap()
	assert.Len(t, fm, len(sp)-len(RemovedFuncs())+5)
	for _, name := range []string{"toYaml", "stringify", "hash", "unquote", "literal"} {
		assert.Contains(t, fm, name)
	}
	for _, name := range []string{"upper", "indent", "toJson", "sha256sum", "derivePassword", "decryptAES",
		"duration", "dateModify", "unixEpoch", "semver", "fail", "dict", "b64enc", "buildCustomCert"} {
		assert.Contains(t, fm, name)
	}
}

func TestFuncMapIsFreshPerCall(t *testing.T) {
	a := FuncMap()
	delete(a, "upper")
	assert.Contains(t, FuncMap(), "upper")
}

func TestFuncMapDeterministicOutput(t *testing.T) {
	text := `{{ "a,b" | splitList "," | toJson }} {{ duration "95" }} {{ "abc" | sha256sum }}`
	first, err := execTemplate(t, text, nil)
	require.NoError(t, err)
	second, err := execTemplate(t, text, nil)
	require.NoError(t, err)
	assert.Equal(t, first, second)
	assert.Contains(t, first, " 1m35s ")
}

// failingMarshaler is a value whose YAML marshalling fails.
type failingMarshaler struct{}

// MarshalYAML always fails.
func (failingMarshaler) MarshalYAML() (any, error) { return nil, errors.New("boom") }

func TestToYaml(t *testing.T) {
	cases := []struct {
		name string
		in   any
		want string
	}{
		{"quoted scalars", map[string]any{"A": "false", "B": "42", "C": "yes", "D": "plain", "E": "on"},
			"A: \"false\"\nB: \"42\"\nC: \"yes\"\nD: plain\nE: \"on\""},
		{"sorted keys", map[string]any{"b": 1, "a": 2, "c": 3}, "a: 2\nb: 1\nc: 3"},
		{"four-space nested indent", map[string]any{"m": map[string]any{"k": []any{"x", map[string]any{"name": "web", "v": true}}}},
			"m:\n    k:\n        - x\n        - name: web\n          v: true"},
		{"multi-line string", map[string]any{"s": "line1\nline2\n"}, "s: |\n    line1\n    line2"},
		{"string", "hello", "hello"},
		{"nil", nil, "null"},
		{"empty map", map[string]any{}, "{}"},
		{"list", []any{1, "2"}, "- 1\n- \"2\""},
		{"only one final newline removed", "a\n\n", "|+\n    a\n"},
		{"marshal error", map[string]any{"f": failingMarshaler{}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, ToYaml(c.in))
		})
	}
}

func TestToYamlSampleConfigMapTemplate(t *testing.T) {
	tmpl := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: platform-config\n  namespace: {{ .Namespace}}\ndata:\n{{ toYaml .ConfigData | indent 2}}\n"
	data := map[string]any{
		"Namespace": "dev-large-observability-prometheus",
		"ConfigData": map[string]any{
			"CLUSTER_NAME": "Large", "DATABASE_URL": "mysql://west:8806/mysql2", "ENVIRONMENT": "Dev",
			"REGION": "West US", "SOME_COMMON_ENVIRONMENT_VARIABLE": "false",
		},
	}
	got, err := execTemplate(t, tmpl, data)
	require.NoError(t, err)
	want := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: platform-config\n  namespace: dev-large-observability-prometheus\ndata:\n" +
		"  CLUSTER_NAME: Large\n  DATABASE_URL: mysql://west:8806/mysql2\n  ENVIRONMENT: Dev\n  REGION: West US\n" +
		"  SOME_COMMON_ENVIRONMENT_VARIABLE: \"false\"\n"
	assert.Equal(t, want, got)
}

func TestFuncStringify(t *testing.T) {
	cases := []struct {
		name string
		in   any
		want string
	}{
		{"scalars only", map[string]any{"A": "x", "B": "42"}, "A: x\nB: \"42\""},
		{"list becomes literal block", map[string]any{"L": []any{"a", "b"}}, "L: |\n    - a\n    - b"},
		{"nested map becomes literal block", map[string]any{"M": map[string]any{"k": "v", "n": map[string]any{"x": 1}}},
			"M: |\n    k: v\n    \"n\":\n        x: 1"},
		{"map[any]any nested map", map[string]any{"M": map[any]any{"k": "v"}}, "M: |\n    k: v"},
		{"map[string]string nested", map[string]any{"M": map[string]string{"k": "v"}}, "M: |\n    k: v"},
		{"typed list", map[string]any{"L": []string{"a"}}, "L: |\n    - a"},
		{"map[any]any top level", map[any]any{"a": []any{1}}, "a: |\n    - 1"},
		{"empty list", map[string]any{"L": []any{}}, "L: |\n    []"},
		{"non-map", []any{"a", map[string]any{"b": 1}}, "- a\n- b: 1"},
		{"string", "s", "s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Stringify(c.in))
		})
	}
}

func TestFuncStringifyInTemplate(t *testing.T) {
	data := map[string]any{"ConfigData": map[string]any{
		"PORTS": ParseConfigValue("[80, 443]"),
		"DB":    ParseConfigValue("host: db\nport: 5432"),
		"NAME":  "x",
	}}
	got, err := execTemplate(t, "{{ stringify .ConfigData }}", data)
	require.NoError(t, err)
	assert.Equal(t, "DB: |\n    host: db\n    port: 5432\nNAME: x\nPORTS: |\n    - 80\n    - 443", got)
}

// TestHash: hash gives the reference's numbers (hashstructure v1.1.0 Hash(v, nil)) for maps,
// nested maps, lists, numbers and strings, as config data holds them; v2's format differs.
func TestHash(t *testing.T) {
	values := map[string]any{
		"map":        map[string]any{"a": 1, "b": []any{"x", "y"}},
		"nested map": map[string]any{"DB": map[string]any{"host": "db", "port": 5432, "tls": map[string]any{"on": true}}, "NAME": "x"},
		"list":       []any{"x", 1, 2.5, []any{"y"}, map[string]any{"k": "v"}},
		"int":        42,
		"float":      3.25,
		"string":     "Large",
		"config":     map[string]any{"PORTS": ParseConfigValue("[80, 443]"), "DB": ParseConfigValue("host: db\nport: 5432"), "N": ParseConfigValue("7"), "S": ParseConfigValue("Dev")},
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			want, err := hashstructure.Hash(v, nil)
			require.NoError(t, err)
			got, err := Hash(v)
			require.NoError(t, err)
			assert.Equal(t, strconv.FormatUint(want, 10), got)

			out, err := execTemplate(t, `{{ hash .V }}`, map[string]any{"V": v})
			require.NoError(t, err)
			assert.Equal(t, got, out)
		})
	}
	v2, err := hashstructurev2.Hash(values["map"], hashstructurev2.FormatV2, nil)
	require.NoError(t, err)
	got, err := Hash(values["map"])
	require.NoError(t, err)
	assert.NotEqual(t, strconv.FormatUint(v2, 10), got, "v2's format gives other numbers for maps")

	same, err := Hash(map[string]any{"b": []any{"x", "y"}, "a": 1})
	require.NoError(t, err)
	assert.Equal(t, got, same)
	other, err := Hash(map[string]any{"a": 2, "b": []any{"x", "y"}})
	require.NoError(t, err)
	assert.NotEqual(t, got, other)
}

func TestHashError(t *testing.T) {
	_, err := Hash(make(chan int))
	assert.Error(t, err)
}

func TestUnquote(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{`"abc"`, "abc"},
		{`'abc'`, "abc"},
		{`  "abc"  `, "abc"},
		{`""abc""`, "abc"},
		{`"'abc'"`, "abc"},
		{`'"abc"'`, `"abc"`},
		{`"a"b"`, `a"b`},
		{`" abc "`, " abc "},
		{`"`, ""},
		{"", ""},
		{"abc", "abc"},
		{`"abc`, "abc"},
		{42, ""},
		{nil, ""},
		{[]any{"a"}, ""},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.in), func(t *testing.T) {
			assert.Equal(t, c.want, Unquote(c.in))
		})
	}
}

func TestLiteral(t *testing.T) {
	text := `{{ literal "{{ $labels.instance }} is down" }}`
	once, err := execTemplate(t, text, nil)
	require.NoError(t, err)
	assert.NotContains(t, once, "{{")
	// A second pass over the output leaves the escaped text alone.
	twice, err := execTemplate(t, once, nil)
	require.NoError(t, err)
	assert.Equal(t, once, twice)
	assert.Equal(t, "{{ $labels.instance }} is down", RestoreLiterals(twice))
}

func TestLiteralRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "{{", "}}", "{{{ x }}}", "a {{b}} c }} {{", "{ {"} {
		assert.Equal(t, s, RestoreLiterals(Literal(s)), s)
		assert.NotContains(t, Literal(s), "{{")
		assert.NotContains(t, Literal(s), "}}")
	}
}

func BenchmarkToYaml(b *testing.B) {
	data := map[string]any{
		"CLUSTER_NAME": "Large", "DATABASE_URL": "mysql://west:8806/mysql2", "ENVIRONMENT": "Dev",
		"REGION": "West US", "SOME_COMMON_ENVIRONMENT_VARIABLE": "false",
		"LIST": []any{map[string]any{"name": "a", "v": 1}, map[string]any{"name": "b", "v": 2}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if strings.TrimSpace(ToYaml(data)) == "" {
			b.Fatal("empty")
		}
	}
}
