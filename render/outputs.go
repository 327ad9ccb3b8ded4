package render

import (
	"iter"
	"maps"
	"slices"
)

// Outputs are the files of a result's rendered assignments, by assignment key. A result
// derived from another (see Incremental) shares the unchanged outputs with it instead of
// copying them: Outputs is a frozen base map plus a short stack of frozen layers, each
// holding the keys a change set or removed. A derived value adds one layer, so deriving
// costs what the change holds; layers are merged as they pile up (a layer at least half the
// size of the one below it is merged into it) and, once they hold an eighth of the base,
// into a new base, which keeps lookups short and the copying amortised to a few entries
// per changed key.
//
// No map of an Outputs is written after the value is made: values derived from one another
// may be read concurrently, and an older value never changes. The zero value is empty.
type Outputs struct {
	base   map[string]Files // never written after it is made
	layers []layer          // newest last; each never written after it is made
	n      int              // keys with files
}

// layer is a change of Outputs: the keys it sets, and those it removes (gone).
type layer map[string]slot

// slot is one key of a layer.
type slot struct {
	files Files
	gone  bool
}

// compactFraction is the fraction of the base the layers may hold before they are folded
// into a new base.
const compactFraction = 8

// NewOutputs returns Outputs holding m, which it takes: m must not be written afterwards.
func NewOutputs(m map[string]Files) Outputs {
	return Outputs{base: m, n: len(m)}
}

// Len is the number of assignments with outputs, in constant time.
func (o Outputs) Len() int { return o.n }

// Get returns the files of an assignment, and whether it has outputs.
func (o Outputs) Get(key string) (Files, bool) {
	for i := len(o.layers) - 1; i >= 0; i-- {
		if s, ok := o.layers[i][key]; ok {
			return s.files, !s.gone
		}
	}
	files, ok := o.base[key]
	return files, ok
}

// of returns the files of an assignment, none when it has no outputs.
func (o Outputs) of(key string) Files {
	files, _ := o.Get(key)
	return files
}

// All yields every assignment key with its files, in no particular order.
func (o Outputs) All() iter.Seq2[string, Files] {
	return func(yield func(string, Files) bool) {
		top := o.merged()
		for key, s := range top {
			if !s.gone && !yield(key, s.files) {
				return
			}
		}
		for key, files := range o.base {
			if _, shadowed := top[key]; !shadowed && !yield(key, files) {
				return
			}
		}
	}
}

// Keys yields every assignment key with outputs, in no particular order.
func (o Outputs) Keys() iter.Seq[string] {
	return func(yield func(string) bool) {
		for key := range o.All() {
			if !yield(key) {
				return
			}
		}
	}
}

// Map returns the outputs as a new flat map, which the caller owns.
func (o Outputs) Map() map[string]Files {
	m := make(map[string]Files, o.n)
	maps.Insert(m, o.All())
	return m
}

// Only returns the outputs of the named keys that have some.
func (o Outputs) Only(keys []string) Outputs {
	m := make(map[string]Files, len(keys))
	for _, key := range keys {
		if files, ok := o.Get(key); ok {
			m[key] = files
		}
	}
	return NewOutputs(m)
}

// merged is the layers as one: the single layer itself, or a new map of them all.
func (o Outputs) merged() layer {
	switch len(o.layers) {
	case 0:
		return nil
	case 1:
		return o.layers[0]
	}
	return mergeLayers(o.layers)
}

// mergeLayers folds layers, oldest first, into a new one.
func mergeLayers(layers []layer) layer {
	size := 0
	for _, l := range layers {
		size += len(l)
	}
	out := make(layer, size)
	for _, l := range layers {
		maps.Copy(out, l)
	}
	return out
}

// withLen returns the outputs changed by ch: the keys ch sets, and those it removes, n keys
// having outputs afterwards (the caller knows it: see Incremental). ch is taken: it must not be
// written afterwards. o is not modified.
func (o Outputs) withLen(ch layer, n int) Outputs {
	if len(ch) == 0 {
		return o
	}
	next := Outputs{base: o.base, n: n}
	layers := append(slices.Clip(o.layers), ch) // a new array: o's stays as it is
	held := 0
	for _, l := range layers {
		held += len(l)
	}
	if compactFraction*held >= len(o.base) {
		next.base = compact(o.base, layers)
		return next
	}
	for k := len(layers); k >= 2 && 2*len(layers[k-1]) >= len(layers[k-2]); k-- {
		layers = append(layers[:k-2], mergeLayers(layers[k-2:k]))
	}
	next.layers = layers
	return next
}

// compact returns a new base: base changed by layers, oldest first.
func compact(base map[string]Files, layers []layer) map[string]Files {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]Files{}
	}
	for _, l := range layers {
		for key, s := range l {
			if s.gone {
				delete(out, key)
			} else {
				out[key] = s.files
			}
		}
	}
	return out
}
