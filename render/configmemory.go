package render

import (
	"encoding/binary"
	"maps"
	"reflect"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// The engine of a later snapshot takes from an earlier result the platform config that did
// not change: the parsed data of each ConfigMap whose data has the same text, and the
// composed configs of the same selections of that data, with the texts made of them. Across
// engines a composed config is known by its inputs (see inputKey): the identity of the parsed
// data of each ConfigMap it merges, which is taken, never parsed again, while the ConfigMap's
// data does not change, and a changed ConfigMap is parsed into new data. Composed data is read
// only (a template that writes into .ConfigData writes into its assignment's own copy, see
// mutation.go), so engines, even rendering at once, share it.

// maxIdleResults is how many results in a row a composed config is kept through without an
// engine using it.
const maxIdleResults = 16

// maxKeptConfigs bounds how many composed configs a result keeps: those its engine used
// first, then those of the earlier result.
const maxKeptConfigs = 8192

// maxInheritedSlots bounds the pipe slot numbering an engine takes from an earlier one
// (see slotNumbering); past it, an engine numbers its step kinds afresh.
const maxInheritedSlots = 64

// configMemory is what a result keeps of its engine's platform config for the engine of a
// later snapshot; read only.
type configMemory struct {
	sources  map[string]parsedSource // by ConfigMap name, those of the result's snapshot
	composed map[string]heldConfig   // by inputKey
	slots    pipeSlots               // the numbering of the composed configs' pipe slots
}

// parsedSource is a ConfigMap's data and its parsed values.
type parsedSource struct {
	texts map[string]string
	data  map[string]any
}

// heldConfig is a composed config a result keeps, and for how many results in a row no
// engine has used it.
type heldConfig struct {
	c    *composedConfig
	idle int
}

// parsedData returns the parsed data of a ConfigMap whose data has the same text as when m
// was made, else nil.
func (m *configMemory) parsedData(cm *scheduling.ConfigMap) map[string]any {
	if m == nil {
		return nil
	}
	if src, ok := m.sources[cm.Name]; ok && maps.Equal(src.texts, cm.Data) {
		return src.data
	}
	return nil
}

// slotNumbering returns the pipe slot numbering for an engine to extend and whether it is m's:
// then a composed config of m keeps its formatted texts in the same slots.
func (m *configMemory) slotNumbering() (pipeSlots, bool) {
	if m == nil || len(m.slots) > maxInheritedSlots {
		return pipeSlots{}, false
	}
	return maps.Clone(m.slots), true
}

// still returns the composed configs of m whose inputs are all in set, with slots pipe slots,
// numbered as m's if sameSlots, else empty.
func (m *configMemory) still(set *ConfigSet, slots int, sameSlots bool) map[string]heldConfig {
	if m == nil || len(m.composed) == 0 {
		return nil
	}
	live := make(map[uintptr]bool, len(set.entries))
	for _, e := range set.entries {
		live[mapIdentity(e.source)] = true
	}
	out := make(map[string]heldConfig, len(m.composed))
next:
	for key, h := range m.composed {
		for _, src := range h.c.sources {
			if !live[mapIdentity(src)] {
				continue next
			}
		}
		if !sameSlots {
			h.c = h.c.withSlots(slots, false)
		}
		out[key] = h
	}
	return out
}

// memory is what the index keeps for a later engine: the parsed data of the snapshot's
// ConfigMaps, and at most limit composed configs: those it made or took, then those of the
// earlier result still valid that have not been idle too long.
func (idx *configIndex) memory(slots pipeSlots, limit int) *configMemory {
	held := make(map[string]heldConfig, min(len(idx.earlier), limit))
	idx.composed.Range(func(_, v any) bool {
		c := v.(*composedConfig)
		held[c.inputs] = heldConfig{c: c}
		return len(held) < limit
	})
	for key, h := range idx.earlier {
		if len(held) >= limit {
			break
		}
		if _, used := held[key]; !used && h.idle < maxIdleResults {
			held[key] = heldConfig{c: h.c, idle: h.idle + 1}
		}
	}
	return &configMemory{sources: idx.sources, composed: held, slots: slots}
}

// take returns the composed config of a selection: the earlier result's of the same inputs,
// else one composed now.
func (idx *configIndex) take(sel []int) *composedConfig {
	key := idx.set.inputKey(sel)
	if h, ok := idx.earlier[key]; ok {
		return h.c.withSlots(idx.slots, true)
	}
	c := newComposedConfig(idx.set.Compose(sel), idx.slots)
	c.inputs, c.sources = key, idx.set.sources(sel)
	return c
}

// withSlots returns c with at least n pipe slots: c itself when it has them, else a composed
// config sharing c's data and formatted texts, and its indented texts when keep is set.
func (c *composedConfig) withSlots(n int, keep bool) *composedConfig {
	if keep && len(c.pipedTexts) >= n {
		return c
	}
	out := &composedConfig{data: c.data, yaml: c.yaml, stringified: c.stringified, inputs: c.inputs, sources: c.sources, pipedTexts: pipedSlots(n)}
	if keep {
		for i := range c.pipedTexts {
			out.pipedTexts[i].Store(c.pipedTexts[i].Load())
		}
	}
	return out
}

// inputKey identifies what the config composed of a selection is made of, whatever the
// ConfigSet: per entry, the identity of its ConfigMap's parsed data and, for an
// azure-app-config entry, its key. The data of a key stays alive (composedConfig.sources), so
// no other data can take its address.
func (s *ConfigSet) inputKey(sel []int) string {
	b := make([]byte, 0, 10*len(sel))
	for _, i := range sel {
		e := &s.entries[i]
		b = binary.LittleEndian.AppendUint64(b, uint64(mapIdentity(e.source)))
		if !e.split {
			b = append(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(e.rawKey))+1)
		b = append(b, e.rawKey...)
	}
	return string(b)
}

// sources returns the parsed data of the ConfigMaps a selection's entries come from.
func (s *ConfigSet) sources(sel []int) []map[string]any {
	out := make([]map[string]any, 0, len(sel))
	for _, i := range sel {
		out = append(out, s.entries[i].source)
	}
	return out
}

// mapIdentity is the address of a map.
func mapIdentity(m map[string]any) uintptr {
	return reflect.ValueOf(m).Pointer()
}

// configMemory is what the engine keeps of its platform config for a later snapshot's engine,
// once it has rendered.
func (e *Engine) configMemory() *configMemory {
	return e.config.memory(e.slots, maxKeptConfigs)
}
