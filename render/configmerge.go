package render

// Merging of platform-config values: later sources override earlier ones, maps merge key by
// key, lists of named items merge by name.

import (
	"reflect"
)

// MergeValue merges v into dst[key] as the reference composes configs (maps merge key by key,
// lists of named items by name, anything else is replaced) without mutating any value nested in
// dst or v.
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
