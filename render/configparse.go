package render

// Parsing of platform-config values: every ConfigMap value is parsed once, as the reference does,
// and the values a JSON schema sees are numbers where they read as numbers.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	yaml2 "go.yaml.in/yaml/v2"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// ConfigSource is one config ConfigMap with every value parsed once by ParseConfigValue; treat it as read-only.
type ConfigSource struct {
	Name   string
	Labels map[string]string
	Data   map[string]any
	origin *scheduling.ConfigMap // the ConfigMap it was read from, when known
}

// ParseConfigMap parses every value of a ConfigMap's data into a ConfigSource.
func ParseConfigMap(name string, labels, data map[string]string) ConfigSource {
	parsed := make(map[string]any, len(data))
	for k, v := range data {
		parsed[k] = ParseConfigValue(v)
	}
	return ConfigSource{Name: name, Labels: labels, Data: parsed}
}

// ParseConfigValue returns a quoted value's text, a YAML list or map as structured data, and any other value as the original string.
func ParseConfigValue(s string) any {
	trimmed := strings.TrimSpace(s)
	if strings.HasPrefix(trimmed, "'") && strings.HasSuffix(trimmed, "'") {
		return strings.Trim(trimmed, "'")
	}
	var v any
	if err := yaml2.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	switch v.(type) {
	case []any, map[any]any:
		return normalizeYAML(v)
	default:
		return s
	}
}

// normalizeYAML converts yaml.v2 maps to map[string]any (keys via fmt.Sprint) throughout v.
func normalizeYAML(v any) any {
	switch t := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(t))
		for _, k := range sortedYAMLKeys(t) {
			out[fmt.Sprint(k)] = normalizeYAML(t[k])
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalizeYAML(e)
		}
		return out
	default:
		return v
	}
}

// sortedYAMLKeys orders keys so that colliding fmt.Sprint forms resolve deterministically, string keys winning.
func sortedYAMLKeys(m map[any]any) []any {
	keys := make([]any, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		_, si := keys[i].(string)
		_, sj := keys[j].(string)
		if si != sj {
			return sj
		}
		return fmt.Sprintf("%T:%v", keys[i], keys[i]) < fmt.Sprintf("%T:%v", keys[j], keys[j])
	})
	return keys
}

// ParseAzureKey splits an azure-app-config key `l1.v1.l2.v2.KEY` into its label pairs and final key; an unpaired segment is dropped.
func ParseAzureKey(key string) (labels map[string]string, name string) {
	parts := strings.Split(key, ".")
	labels = make(map[string]string, (len(parts)-1)/2)
	for i := 0; i+1 < len(parts)-1; i += 2 {
		labels[parts[i]] = parts[i+1]
	}
	return labels, parts[len(parts)-1]
}

// ValidationValues returns data with top-level strings that parse as integers or finite floats
// converted to int64 or float64, as the reference converts config values before JSON-schema
// validation (NaN and Inf stay strings).
func ValidationValues(data map[string]any) map[string]any {
	out := make(map[string]any, len(data))
	for k, v := range data {
		out[k] = coerceNumber(v)
	}
	return out
}

// coerceNumber converts a numeric string to int64 or a finite float64 and returns anything else unchanged.
func coerceNumber(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f
	}
	return s
}
