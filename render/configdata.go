package render

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	yaml2 "go.yaml.in/yaml/v2"
)

// Label keys with a fixed meaning when a label set is matched against a cluster type and deployment target.
const (
	LabelClusterType      = "cluster-type"
	LabelDeploymentTarget = "deployment-target"
	LabelWorkload         = "workload"
	LabelPlatformConfig   = "platform-config"
	LabelFluxName         = "kustomize.toolkit.fluxcd.io/name"
	LabelFluxNamespace    = "kustomize.toolkit.fluxcd.io/namespace"
)

// ConfigSource is one config ConfigMap with every value parsed once by ParseConfigValue; treat it as read-only.
type ConfigSource struct {
	Name   string
	Labels map[string]string
	Data   map[string]any
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

// LabelsMatch reports whether every label in sel is satisfied by the cluster type and deployment target (spec §6.1).
func LabelsMatch(sel map[string]string, ctName string, ctLabels map[string]string, dtName string, dtLabels map[string]string) bool {
	for k, v := range sel {
		if !labelMatches(k, v, ctName, ctLabels, dtName, dtLabels) {
			return false
		}
	}
	return true
}

// labelMatches checks one selector label; missing labels compare as "".
func labelMatches(k, v, ctName string, ctLabels map[string]string, dtName string, dtLabels map[string]string) bool {
	switch k {
	case LabelFluxName, LabelFluxNamespace, LabelPlatformConfig:
		return true
	case LabelClusterType:
		return v == ctName
	case LabelDeploymentTarget:
		return v == dtName
	case LabelWorkload:
		return v == dtLabels[LabelWorkload]
	default:
		return v == ctLabels[k] || v == dtLabels[k]
	}
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

// MergeValue merges v into dst[key] (spec §6.4) without mutating any value nested in dst or v.
func MergeValue(dst map[string]any, key string, v any) {
	old, ok := dst[key]
	if !ok {
		dst[key] = v
		return
	}
	dst[key] = mergeValues(old, v)
}

// Merge merges every key of src into dst with MergeValue; only dst's own top level is modified.
func Merge(dst, src map[string]any) {
	for k, v := range src {
		MergeValue(dst, k, v)
	}
}

// mergeValues returns the merge of newer over old as a fresh value, sharing unmodified subtrees.
func mergeValues(old, newer any) any {
	switch n := newer.(type) {
	case map[string]any:
		if o, ok := old.(map[string]any); ok {
			return mergeMaps(o, n)
		}
	case []any:
		if o, ok := old.([]any); ok {
			return mergeLists(o, n)
		}
	}
	return newer
}

// mergeMaps returns a copy of old with newer merged in key by key.
func mergeMaps(old, newer map[string]any) map[string]any {
	out := make(map[string]any, len(old)+len(newer))
	for k, v := range old {
		out[k] = v
	}
	Merge(out, newer)
	return out
}

// mergeLists merges each new map element into every element with an equal `name`, appending unmatched elements.
func mergeLists(old, newer []any) []any {
	out := make([]any, len(old), len(old)+len(newer))
	copy(out, old)
	for _, item := range newer {
		if !mergeIntoNamed(out, item) {
			out = append(out, item)
		}
	}
	return out
}

// mergeIntoNamed replaces every map element of list whose `name` equals item's with the merge of both; false if none.
func mergeIntoNamed(list []any, item any) bool {
	im, ok := item.(map[string]any)
	if !ok {
		return false
	}
	matched := false
	for i, e := range list {
		em, ok := e.(map[string]any)
		if ok && sameValue(em["name"], im["name"]) {
			list[i] = mergeMaps(em, im)
			matched = true
		}
	}
	return matched
}

// sameValue compares two values with == when both are comparable, and with reflect.DeepEqual otherwise.
func sameValue(a, b any) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb {
		return false
	}
	if ta == nil || ta.Comparable() {
		return a == b
	}
	return reflect.DeepEqual(a, b)
}

// configEntry is one unit of composition: a platform ConfigMap, or a single azure-app-config key.
type configEntry struct {
	labels map[string]string
	data   map[string]any
}

// ConfigSet is an immutable, prepared set of config sources; safe for concurrent use.
//
// Matching returns the ordered entries that apply to a (cluster type, deployment
// target) pair; SelectionKey of that result identifies the composed config, so a
// caller can compose once per distinct selection and share the (read-only) result.
type ConfigSet struct {
	entries []configEntry
}

// NewConfigSet prepares platform ConfigMaps and azure-app-config ConfigMaps, each ordered by name, for composition.
func NewConfigSet(platform, azure []ConfigSource) *ConfigSet {
	s := &ConfigSet{}
	for _, src := range sortedByName(platform) {
		s.entries = append(s.entries, configEntry{labels: src.Labels, data: src.Data})
	}
	for _, src := range sortedByName(azure) {
		s.entries = append(s.entries, azureEntries(src)...)
	}
	return s
}

// sortedByName returns a copy of srcs stably sorted by name.
func sortedByName(srcs []ConfigSource) []ConfigSource {
	out := append([]ConfigSource(nil), srcs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// azureEntries turns each key of an azure-app-config map into an entry, keys ordered by length, then text.
func azureEntries(src ConfigSource) []configEntry {
	keys := make([]string, 0, len(src.Data))
	for k := range src.Data {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) < len(keys[j])
		}
		return keys[i] < keys[j]
	})
	entries := make([]configEntry, 0, len(keys))
	for _, k := range keys {
		labels, name := ParseAzureKey(k)
		entries = append(entries, configEntry{labels: labels, data: map[string]any{name: src.Data[k]}})
	}
	return entries
}

// Matching returns, in merge order, the indices of the entries whose labels match the cluster type and deployment target.
func (s *ConfigSet) Matching(ctName string, ctLabels map[string]string, dtName string, dtLabels map[string]string) []int {
	var sel []int
	for i, e := range s.entries {
		if LabelsMatch(e.labels, ctName, ctLabels, dtName, dtLabels) {
			sel = append(sel, i)
		}
	}
	return sel
}

// Compose merges the selected entries in order into a fresh map whose nested values may be shared: treat it as read-only.
func (s *ConfigSet) Compose(selection []int) map[string]any {
	out := make(map[string]any)
	for _, i := range selection {
		Merge(out, s.entries[i].data)
	}
	return out
}

// SelectionKey encodes a selection returned by Matching as a string usable as a cache key.
func SelectionKey(selection []int) string {
	var b strings.Builder
	for i, n := range selection {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// Compose builds the config data for one cluster type and deployment target (spec §6.2).
func Compose(platform, azure []ConfigSource, ctName string, ctLabels map[string]string, dtName string, dtLabels map[string]string) map[string]any {
	s := NewConfigSet(platform, azure)
	return s.Compose(s.Matching(ctName, ctLabels, dtName, dtLabels))
}

// ValidationValues returns data with top-level strings that parse as integers or finite floats converted to int64 or float64 (spec §6.5).
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
