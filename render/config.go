package render

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// configIndex holds an environment's platform config, parsed once, and the composed config of
// every distinct selection of sources (many assignments share one).
type configIndex struct {
	set      *ConfigSet
	slots    int // the engine's pipeSlots, kept by each composed config
	broken   []*scheduling.Object
	composed sync.Map // selection key → *composedConfig
	byData   sync.Map // map pointer of a composedConfig's data → *composedConfig
	// values are the parsed config values (ParseConfigValue) by their text, read only once
	// made: the index of a later snapshot takes those whose text it has too.
	values map[string]any
	// sources are the snapshot's ConfigMaps with their parsed data, by name; earlier are the
	// composed configs of an earlier result that this snapshot's config can compose (see
	// configMemory); both read only once made.
	sources map[string]parsedSource
	earlier map[string]heldConfig
}

// composedConfig is the (read-only) config of one selection of sources and its YAML forms,
// each made once: the config templates of every assignment that shares it print the same text.
type composedConfig struct {
	data        map[string]any
	yaml        func() string            // ToYaml(data)
	stringified func() string            // Stringify(data)
	pipedTexts  []atomic.Pointer[string] // per pipe slot, what a compiled step prints, once made
	inputs      string                   // what it is composed of (see ConfigSet.inputKey)
	sources     []map[string]any         // the parsed data of the ConfigMaps it merges
}

func newComposedConfig(data map[string]any, slots int) *composedConfig {
	return &composedConfig{
		data:        data,
		pipedTexts:  pipedSlots(slots),
		yaml:        sync.OnceValue(func() string { return ToYaml(data) }),
		stringified: sync.OnceValue(func() string { return Stringify(data) }),
	}
}

// compose returns the composed config of a selection and the selection's key.
func (idx *configIndex) compose(sel []int) (*composedConfig, string) {
	key := SelectionKey(sel)
	if c, ok := idx.composed.Load(key); ok {
		return c.(*composedConfig), key
	}
	c, loaded := idx.composed.LoadOrStore(key, idx.take(sel))
	cc := c.(*composedConfig)
	if !loaded {
		idx.byData.Store(reflect.ValueOf(cc.data).Pointer(), cc)
	}
	return cc, key
}

// lookup returns the composed config whose data v is, or nil. Composed maps live as long as
// the index, so no other map can have the same address meanwhile.
func (idx *configIndex) lookup(v any) *composedConfig {
	m, ok := v.(map[string]any)
	if !ok || m == nil {
		return nil
	}
	if c, ok := idx.byData.Load(reflect.ValueOf(m).Pointer()); ok {
		return c.(*composedConfig)
	}
	return nil
}

// isPlatformConfig tells whether a ConfigMap carries platform config and how.
func isPlatformConfig(name string, labels map[string]string) (platform, azure bool) {
	return labels["platform-config"] == "true", strings.HasPrefix(name, "azure-app-config")
}

// newConfigIndex indexes the platform config of a snapshot. It takes from mem, what an
// earlier result kept (nil for none), the parsed data of each ConfigMap whose data did not
// change and the composed configs of that data, whose pipe slots are numbered as the
// engine's if sameSlots; it parses the values whose text is not among earlier's, the values of
// an earlier index (nil for none). Parsed values are never modified (see MergeValue), so
// indexes share them.
func newConfigIndex(snap *scheduling.Snapshot, slots int, earlier map[string]any, mem *configMemory, sameSlots bool) *configIndex {
	var platform, azure []ConfigSource
	values := make(map[string]any, len(earlier))
	sources := make(map[string]parsedSource, len(snap.ConfigMaps))
	for _, cm := range snap.ConfigMaps {
		p, az := isPlatformConfig(cm.Name, cm.Labels)
		data := mem.parsedData(cm)
		if data != nil {
			keepValues(cm.Data, data, values)
		} else {
			data = parseData(cm.Data, values, earlier)
		}
		sources[cm.Name] = parsedSource{texts: cm.Data, data: data}
		src := ConfigSource{Name: cm.Name, Labels: cm.Labels, Data: data, origin: cm}
		if p {
			platform = append(platform, src)
		}
		if az {
			azure = append(azure, src)
		}
	}
	idx := &configIndex{set: NewConfigSet(platform, azure), slots: slots, values: values, sources: sources}
	idx.earlier = mem.still(idx.set, slots, sameSlots)
	for _, b := range snap.Broken {
		if p, az := isPlatformConfig(b.Name, b.Labels); b.Kind == scheduling.KindConfigMap && (p || az || b.Unknown) {
			idx.broken = append(idx.broken, b)
		}
	}
	return idx
}

// keepValues adds to values the parsed values of data, whose texts are texts, that it lacks.
func keepValues(texts map[string]string, data, values map[string]any) {
	for k, text := range texts {
		if _, ok := values[text]; !ok {
			values[text] = data[k]
		}
	}
}

// parseData parses the values of a ConfigMap as ParseConfigMap does, taking each from values
// or earlier when its text is there, and adds them to values.
func parseData(data map[string]string, values, earlier map[string]any) map[string]any {
	parsed := make(map[string]any, len(data))
	for k, text := range data {
		v, ok := values[text]
		if !ok {
			if v, ok = earlier[text]; !ok {
				v = ParseConfigValue(text)
			}
			values[text] = v
		}
		parsed[k] = v
	}
	return parsed
}

// configFor validates the config of an assignment, whose matching entries
// (ConfigSet.Matching) are sel, composed as composed with the key key. An invalid ConfigMap that may apply fails the assignment, and
// does not hide what the valid ones violate: the schemas' violations at a value are reported
// with it (a missing value is not: the invalid ConfigMap may hold it).
func (e *Engine) configFor(a *scheduling.Assignment, sel []int, composed *composedConfig, key string) (map[string]any, *scheduling.Error) {
	ct, dt := a.ClusterType, a.Target
	var invalid *scheduling.Error
	for _, b := range e.config.broken {
		if _, az := isPlatformConfig(b.Name, b.Labels); b.Unknown || az || LabelsMatch(b.Labels, ct.Name, ct.Labels, dt.Name, dt.Labels) {
			invalid = &scheduling.Error{Pos: b.Pos, Object: b.Ref(), Msg: fmt.Sprintf("cannot compose the config of %s: this ConfigMap is invalid", a.Key())}
			break
		}
	}
	cfg := composed.data
	err := e.schemas.validate(a, cfg, key, func(k string) (*scheduling.ConfigMap, scheduling.Pos) { return e.config.set.origin(sel, k) })
	switch {
	case invalid != nil:
		if err != nil {
			for _, v := range append([]*scheduling.Error{err}, err.Also...) {
				if v.Object != "" && strings.HasPrefix(v.Object, scheduling.KindConfigMap) {
					c := *v
					c.Also = nil
					invalid.Also = append(invalid.Also, &c)
				}
			}
		}
		return nil, invalid
	case err != nil:
		return nil, err
	}
	return cfg, nil
}
