package render

// Selection and composition of platform config: which sources apply to a cluster type and
// deployment target (by labels), and their merge in name order.

import (
	"sort"
	"strconv"
	"strings"

	"github.com/kalypso-gitops/kalypso/scheduling"
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

// LabelsMatch reports whether every label in sel is satisfied by the cluster type and deployment
// target, by the reference's rules: cluster-type and deployment-target match their names, workload
// the target's workload label, the Flux and platform-config labels always match, and any other key
// matches the cluster type's or the target's label of that key.
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

// configEntry is one unit of composition: a platform ConfigMap, or a single azure-app-config key.
type configEntry struct {
	labels map[string]string
	data   map[string]any
	origin *scheduling.ConfigMap // where it is written, when known
	rawKey string                // the data key of an azure-app-config entry ("" for a ConfigMap)
	source map[string]any        // the parsed data of the ConfigMap it comes from (see inputKey)
	split  bool                  // an azure-app-config entry: one key of source
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
		s.entries = append(s.entries, configEntry{labels: src.Labels, data: src.Data, origin: src.origin, source: src.Data})
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
		entries = append(entries, configEntry{labels: labels, data: map[string]any{name: src.Data[k]}, origin: src.origin, rawKey: k, source: src.Data, split: true})
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

// origin returns where the value of a top-level key of the config composed from a selection
// was last written: the ConfigMap and the position of its data key; nil when unknown.
func (s *ConfigSet) origin(selection []int, key string) (*scheduling.ConfigMap, scheduling.Pos) {
	for i := len(selection) - 1; i >= 0; i-- {
		e := s.entries[selection[i]]
		if _, ok := e.data[key]; !ok || e.origin == nil {
			continue
		}
		dataKey := e.rawKey
		if dataKey == "" {
			dataKey = key
		}
		return e.origin, e.origin.At("data." + dataKey)
	}
	return nil, scheduling.Pos{}
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

// Compose builds the config data for one cluster type and deployment target: the matching
// platform ConfigMaps, then azure-app-config keys, each in name order, merged with MergeValue.
func Compose(platform, azure []ConfigSource, ctName string, ctLabels map[string]string, dtName string, dtLabels map[string]string) map[string]any {
	s := NewConfigSet(platform, azure)
	return s.Compose(s.Matching(ctName, ctLabels, dtName, dtLabels))
}
