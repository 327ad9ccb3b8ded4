package render

import (
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

func TestConfigParseValue(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want any
	}{
		{"plain string", "hello", "hello"},
		{"integer stays string", "42", "42"},
		{"bool stays string", "true", "true"},
		{"yaml 1.1 bool stays string", "yes", "yes"},
		{"untrimmed kept", "  Large  ", "  Large  "},
		{"multi-line text", "line1\nline2\n", "line1\nline2\n"},
		{"yaml error kept", "a: [", "a: ["},
		{"empty", "", ""},
		{"null stays string", "~", "~"},
		{"single quoted", "'42'", "42"},
		{"single quoted with spaces", "  'a: b'  ", "a: b"},
		{"all quotes stripped", "''[1, 2]''", "[1, 2]"},
		{"lone quote", "'", ""},
		{"double quoted scalar", `"x"`, `"x"`},
		{"flow list", "[a, 1, true]", []any{"a", 1, true}},
		{"block list", "- a\n- b\n", []any{"a", "b"}},
		{"map", "host: db\nport: 5432", map[string]any{"host": "db", "port": 5432}},
		{"flow map", "{a: 1}", map[string]any{"a": 1}},
		{"non-string keys", "1: one\ntrue: yes\n", map[string]any{"1": "one", "true": true}},
		{"nested maps converted", "a:\n  b:\n    - c: d\n", map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": "d"}}}}},
		{"yaml 1.1 boolean keys", "y: 1\nno: 2", map[string]any{"true": 1, "false": 2}},
		{"nested null and float", "a: ~\nb: 1.5", map[string]any{"a": nil, "b": 1.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, ParseConfigValue(c.in))
		})
	}
}

func TestConfigParseValueYAML11BooleansInNestedValues(t *testing.T) {
	got := ParseConfigValue("flags: [y, Y, yes, on, n, no, off, true, False]\nenabled: on")
	want := map[string]any{
		"flags":   []any{true, true, true, true, false, false, false, true, false},
		"enabled": true,
	}
	assert.Equal(t, want, got)
}

func TestConfigParseValueCollidingKeysDeterministic(t *testing.T) {
	for range 20 {
		assert.Equal(t, map[string]any{"1": "string key"}, ParseConfigValue("1: int key\n\"1\": string key\n"))
	}
}

func TestConfigParseMap(t *testing.T) {
	src := ParseConfigMap("cm", map[string]string{"a": "b"}, map[string]string{"L": "[1]", "S": "s"})
	assert.Equal(t, ConfigSource{Name: "cm", Labels: map[string]string{"a": "b"}, Data: map[string]any{"L": []any{1}, "S": "s"}}, src)
}

func TestConfigLabelsMatch(t *testing.T) {
	ct, ctLabels := "large", map[string]string{"region": "west-us", "size": "large"}
	dt, dtLabels := "observability-prometheus", map[string]string{"workload": "observability", "workspace": "platform-team", "stack": "observability"}
	cases := []struct {
		name string
		sel  map[string]string
		want bool
	}{
		{"empty", nil, true},
		{"only ignored keys", map[string]string{LabelPlatformConfig: "true", LabelFluxName: "x", LabelFluxNamespace: "y"}, true},
		{"cluster type", map[string]string{"cluster-type": "large"}, true},
		{"other cluster type", map[string]string{"cluster-type": "small"}, false},
		{"deployment target", map[string]string{"deployment-target": "observability-prometheus"}, true},
		{"other deployment target", map[string]string{"deployment-target": "x"}, false},
		{"workload", map[string]string{"workload": "observability"}, true},
		{"other workload", map[string]string{"workload": "x"}, false},
		{"ct label", map[string]string{"region": "west-us"}, true},
		{"dt label", map[string]string{"stack": "observability"}, true},
		{"either side", map[string]string{"region": "west-us", "workspace": "platform-team"}, true},
		{"wrong label value", map[string]string{"region": "east-us"}, false},
		{"missing label", map[string]string{"restricted": "true"}, false},
		{"empty value matches missing", map[string]string{"restricted": ""}, true},
		{"one failing label", map[string]string{"region": "west-us", "size": "small"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, LabelsMatch(c.sel, ct, ctLabels, dt, dtLabels))
		})
	}
}

func TestParseAzureKey(t *testing.T) {
	cases := []struct {
		key    string
		labels map[string]string
		name   string
	}{
		{"KEY", map[string]string{}, "KEY"},
		{"a.b", map[string]string{}, "b"},
		{"a.b.c", map[string]string{"a": "b"}, "c"},
		{"a.b.c.d", map[string]string{"a": "b"}, "d"},
		{"a.b.c.d.e", map[string]string{"a": "b", "c": "d"}, "e"},
		{"region.west-us.cluster-type.large.DB_URL", map[string]string{"region": "west-us", "cluster-type": "large"}, "DB_URL"},
		{"", map[string]string{}, ""},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			labels, name := ParseAzureKey(c.key)
			assert.Equal(t, c.labels, labels)
			assert.Equal(t, c.name, name)
		})
	}
}

func TestMergeValue(t *testing.T) {
	cases := []struct {
		name     string
		old, new string
		want     any
	}{
		{"scalar replaces", "a", "b", "b"},
		{"list replaced by scalar", "[1]", "x", "x"},
		{"map replaced by list", "a: 1", "[1]", []any{1}},
		{"list replaced by map", "[1]", "a: 1", map[string]any{"a": 1}},
		{"maps merge recursively", "a: 1\nb:\n  c: 1\n  d: 1", "b:\n  d: 2\n  e: 2\nf: 2",
			map[string]any{"a": 1, "b": map[string]any{"c": 1, "d": 2, "e": 2}, "f": 2}},
		{"scalars append with duplicates", "[1, 2]", "[2, 3]", []any{1, 2, 2, 3}},
		{"named elements merge", "[{name: a, x: 1}, {name: b, x: 1}]", "[{name: b, p: 2}, {name: c}]",
			[]any{map[string]any{"name": "a", "x": 1}, map[string]any{"name": "b", "x": 1, "p": 2}, map[string]any{"name": "c"}}},
		{"every element with equal name", "[{name: a, x: 1}, {name: a, x: 2}]", "[{name: a, p: 3}]",
			[]any{map[string]any{"name": "a", "x": 1, "p": 3}, map[string]any{"name": "a", "x": 2, "p": 3}}},
		{"nameless maps merge together", "[{x: 1}, {p: 1}]", "[{z: 1}]",
			[]any{map[string]any{"x": 1, "z": 1}, map[string]any{"p": 1, "z": 1}}},
		{"nameless does not match named", "[{name: a}]", "[{x: 1}]", []any{map[string]any{"name": "a"}, map[string]any{"x": 1}}},
		{"appended elements are matched later", "[]", "[{name: a, x: 1}, {name: a, p: 2}]",
			[]any{map[string]any{"name": "a", "x": 1, "p": 2}}},
		{"name compared with type", "[{name: 1}]", "[{name: '1'}]", []any{map[string]any{"name": 1}, map[string]any{"name": "1"}}},
		{"element lists merge recursively", "[{name: a, l: [1]}]", "[{name: a, l: [2]}]",
			[]any{map[string]any{"name": "a", "l": []any{1, 2}}}},
		{"non-map elements appended", "[{name: a}]", "[x, [1]]", []any{map[string]any{"name": "a"}, "x", []any{1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := map[string]any{"K": ParseConfigValue(c.old)}
			MergeValue(dst, "K", ParseConfigValue(c.new))
			assert.Equal(t, c.want, dst["K"])
		})
	}
}

func TestMergeNewKey(t *testing.T) {
	dst := map[string]any{"a": "1"}
	Merge(dst, map[string]any{"b": "2", "a": "3"})
	assert.Equal(t, map[string]any{"a": "3", "b": "2"}, dst)
}

func TestMergeDoesNotMutateInputs(t *testing.T) {
	older := map[string]any{
		"M": ParseConfigValue("a: 1\nn:\n  b: 1\nl: [{name: x, v: 1}, {v: 2}]"),
		"L": ParseConfigValue("[{name: x, v: 1}, 1]"),
	}
	newer := map[string]any{
		"M": ParseConfigValue("a: 2\nn:\n  c: 2\nl: [{name: x, w: 2}, {u: 3}, 4]"),
		"L": ParseConfigValue("[{name: x, w: 2}, 2]"),
	}
	olderCopy, newerCopy := deepCopy(older), deepCopy(newer)
	dst := map[string]any{}
	Merge(dst, older)
	Merge(dst, newer)
	Merge(dst, newer)
	assert.Equal(t, olderCopy, older)
	assert.Equal(t, newerCopy, newer)
	assert.Equal(t, []any{map[string]any{"name": "x", "v": 1, "w": 2}, 1, 2, 2}, dst["L"])
}

// deepCopy copies maps and lists recursively.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	default:
		return v
	}
}

// sampleConfigMaps are the platform ConfigMaps of the sample control plane's dev branch (trailing spaces kept).
var sampleConfigMaps = []string{
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dev-config\n  labels:\n     platform-config: \"true\"\ndata:\n  ENVIRONMENT: Dev\n  SOME_COMMON_ENVIRONMENT_VARIABLE: \"false\"\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: east-us-config\n  labels:\n     platform-config: \"true\"\n     region: east-us\ndata:\n  REGION: East US\n  \n\n  \n  \n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: drone-config\n  labels:\n     platform-config: \"true\"\n     cluster-type: drone\ndata:\n  CLUSTER_NAME: Drone",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: restricted-config\n  labels:\n     platform-config: \"true\"\n     restricted: \"true\"\ndata:\n  DATABASE_URL: mysql://restricted-host:3306/mysqlrty123\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: center-config\n  labels:\n     platform-config: \"true\"\n     cluster-type: command-center\ndata:\n  CLUSTER_NAME: Command Center ",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: small-config\n  labels:\n     platform-config: \"true\"\n     cluster-type: small\ndata:\n  CLUSTER_NAME: Small",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: large-config\n  labels:\n     platform-config: \"true\"\n     cluster-type: large\ndata:\n  CLUSTER_NAME: Large  ",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: west-us-config\n  labels:\n     platform-config: \"true\"\n     region: west-us\ndata:\n  REGION: West US\n  DATABASE_URL: mysql://west:8806/mysql2\n",
}

// configMapDoc is the part of a ConfigMap manifest that composition reads.
type configMapDoc struct {
	Metadata struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
}

// loadConfigSources parses ConfigMap manifests into sources.
func loadConfigSources(t testing.TB, docs []string) []ConfigSource {
	t.Helper()
	var out []ConfigSource
	for _, d := range docs {
		var cm configMapDoc
		require.NoError(t, yaml.Unmarshal([]byte(d), &cm))
		out = append(out, ParseConfigMap(cm.Metadata.Name, cm.Metadata.Labels, cm.Data))
	}
	return out
}

func TestComposeSampleDevLarge(t *testing.T) {
	platform := loadConfigSources(t, sampleConfigMaps)
	ctLabels := map[string]string{"region": "west-us", "size": "large"}
	dtLabels := map[string]string{
		LabelFluxName: "dev-platform-svc", LabelFluxNamespace: "flux-system",
		"stack": "observability", "type": "service", "workload": "observability", "workspace": "platform-team",
	}
	got := Compose(platform, nil, "large", ctLabels, "observability-prometheus", dtLabels)
	want := map[string]any{
		"CLUSTER_NAME": "Large", "DATABASE_URL": "mysql://west:8806/mysql2", "ENVIRONMENT": "Dev",
		"REGION": "West US", "SOME_COMMON_ENVIRONMENT_VARIABLE": "false",
	}
	assert.Equal(t, want, got)
	assert.Equal(t, "CLUSTER_NAME: Large\nDATABASE_URL: mysql://west:8806/mysql2\nENVIRONMENT: Dev\nREGION: West US\nSOME_COMMON_ENVIRONMENT_VARIABLE: \"false\"", ToYaml(got))
}

func TestComposePrecedence(t *testing.T) {
	platform := []ConfigSource{
		ParseConfigMap("b", nil, map[string]string{"X": "from b", "L": "[{name: a, v: b}]"}),
		ParseConfigMap("a", nil, map[string]string{"X": "from a", "L": "[{name: a, w: a}]", "A": "a"}),
		ParseConfigMap("c", map[string]string{"cluster-type": "other"}, map[string]string{"X": "from c"}),
	}
	azure := []ConfigSource{
		ParseConfigMap("azure-app-config-2", map[string]string{"cluster-type": "other"}, map[string]string{
			"cluster-type.large.A": "azure specific",
			"A":                    "azure generic",
			"region.east.X":        "azure east",
		}),
		ParseConfigMap("azure-app-config-1", nil, map[string]string{"A": "azure first", "Z": "z"}),
	}
	got := Compose(platform, azure, "large", map[string]string{"region": "west"}, "dt", nil)
	want := map[string]any{
		"X": "from b",
		"L": []any{map[string]any{"name": "a", "w": "a", "v": "b"}},
		"A": "azure specific",
		"Z": "z",
	}
	assert.Equal(t, want, got)
}

func TestComposeAzureKeysOrderedByLengthThenText(t *testing.T) {
	azure := []ConfigSource{ParseConfigMap("azure-app-config", nil, map[string]string{
		"x.y.K": "second", "a.b.K": "first", "K": "generic", "region.west.K": "longest",
	})}
	got := Compose(nil, azure, "ct", map[string]string{"region": "west", "a": "b", "x": "y"}, "dt", nil)
	assert.Equal(t, map[string]any{"K": "longest"}, got)
	got = Compose(nil, azure, "ct", map[string]string{"a": "b", "x": "y"}, "dt", nil)
	assert.Equal(t, map[string]any{"K": "second"}, got)
}

func TestComposeConfigSetSelection(t *testing.T) {
	platform := loadConfigSources(t, sampleConfigMaps)
	set := NewConfigSet(platform, nil)
	large := set.Matching("large", map[string]string{"region": "west-us", "size": "large"}, "dt1", nil)
	large2 := set.Matching("large", map[string]string{"region": "west-us", "size": "large"}, "dt2", nil)
	small := set.Matching("small", map[string]string{"region": "west-us", "size": "small"}, "dt1", nil)
	assert.Equal(t, SelectionKey(large), SelectionKey(large2))
	assert.NotEqual(t, SelectionKey(large), SelectionKey(small))
	assert.Equal(t, "", SelectionKey(nil))
	assert.Equal(t, "0,3,7", SelectionKey([]int{0, 3, 7}))
	// Entries are ordered by name: dev-config, large-config, west-us-config match.
	assert.Len(t, large, 3)
	assert.Equal(t, "Small", set.Compose(small)["CLUSTER_NAME"])
}

func TestComposeConcurrentSharedSources(t *testing.T) {
	platform := []ConfigSource{
		ParseConfigMap("a", nil, map[string]string{"L": "[{name: a, v: 1}]", "M": "k: {x: 1}"}),
		ParseConfigMap("b", nil, map[string]string{"L": "[{name: a, w: 2}, {name: b}]", "M": "k: {y: 2}"}),
	}
	before := deepCopy(platform[0].Data)
	set := NewConfigSet(platform, nil)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				out := set.Compose(set.Matching("ct", nil, fmt.Sprint("dt", i), nil))
				MergeValue(out, "M", ParseConfigValue("k: {z: 3}"))
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, before, platform[0].Data)
}

func TestConfigValidationValues(t *testing.T) {
	nested := map[string]any{"n": "42"}
	in := map[string]any{
		"INT": "42", "NEG": "-7", "PLUS": "+3", "BIG": "99999999999999999999", "FLOAT": "1.5", "EXP": "1e3",
		"BOOL": "true", "TEXT": "abc", "SPACE": " 42", "NAN": "NaN", "INF": "Inf", "NEGINF": "-infinity",
		"HUGE": "1e400", "NESTED": nested, "LIST": []any{"1"}, "EMPTY": "",
	}
	got := ValidationValues(in)
	want := map[string]any{
		"INT": int64(42), "NEG": int64(-7), "PLUS": int64(3), "BIG": 1e20, "FLOAT": 1.5, "EXP": 1000.0,
		"BOOL": "true", "TEXT": "abc", "SPACE": " 42", "NAN": "NaN", "INF": "Inf", "NEGINF": "-infinity",
		"HUGE": "1e400", "NESTED": nested, "LIST": []any{"1"}, "EMPTY": "",
	}
	assert.Equal(t, want, got)
	assert.Equal(t, "42", in["INT"], "input must not change")
	for k, v := range got {
		if f, ok := v.(float64); ok {
			assert.False(t, math.IsNaN(f) || math.IsInf(f, 0), k)
		}
	}
	assert.True(t, reflect.DeepEqual(in["NESTED"], map[string]any{"n": "42"}))
}

// benchmarkSources builds n platform ConfigMaps spread over cluster types and regions.
func benchmarkSources(n int) []ConfigSource {
	var out []ConfigSource
	for i := range n {
		labels := map[string]string{LabelPlatformConfig: "true"}
		switch i % 3 {
		case 1:
			labels["cluster-type"] = fmt.Sprint("ct", i%10)
		case 2:
			labels["region"] = fmt.Sprint("r", i%4)
		}
		out = append(out, ParseConfigMap(fmt.Sprintf("cm-%03d", i), labels, map[string]string{
			fmt.Sprint("K", i%7): fmt.Sprint("v", i),
			"LIST":               fmt.Sprintf("[{name: n%d, v: %d}]", i%5, i),
			"MAP":                fmt.Sprintf("k%d: {x: %d}", i%6, i),
		}))
	}
	return out
}

func BenchmarkCompose(b *testing.B) {
	set := NewConfigSet(benchmarkSources(100), nil)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ct := fmt.Sprint("ct", i%10)
		sel := set.Matching(ct, map[string]string{"region": fmt.Sprint("r", i%4)}, "dt", map[string]string{"workload": "w"})
		if len(set.Compose(sel)) == 0 {
			b.Fatal("empty")
		}
		i++
	}
}
