package render

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// with is withLen counting the keys with outputs by looking them up (lenAfter): the tests of
// Outputs derive values without a schedule to count from.
func (o Outputs) with(ch layer) Outputs { return o.withLen(ch, o.lenAfter(ch)) }

// lenAfter is how many keys have outputs once ch is applied to o, found by looking up each
// key ch holds.
func (o Outputs) lenAfter(ch layer) int {
	n := o.n
	for key, s := range ch {
		_, had := o.Get(key)
		switch {
		case had && s.gone:
			n--
		case !had && !s.gone:
			n++
		}
	}
	return n
}

// filesNamed is a distinct Files value for a test key and version.
func filesNamed(key string, version int) Files {
	return NewFiles([]byte(fmt.Sprintf("%s v%d", key, version)), []byte("ns"), nil, false)
}

// TestOutputsFollowAMapThroughChanges derives a long chain of Outputs by random changes (sets
// of new and existing keys, removals of existing and absent keys, of one key or many) and
// checks each against a plain map changed the same way: Len, Get of every key ever used, All
// and Map. Every earlier value is checked again at the end: deriving never changes one.
func TestOutputsFollowAMapThroughChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]string, 2600)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	model := map[string]Files{}
	for _, key := range keys[:2000] {
		model[key] = filesNamed(key, 0)
	}
	o := NewOutputs(maps.Clone(model))
	var history []Outputs
	var models []map[string]Files
	compactions, deepest := 0, 0
	for step := range 400 {
		ch := layer{}
		for range []int{1, 3, 40, 300}[rng.IntN(4)] {
			key := keys[rng.IntN(len(keys))]
			if rng.IntN(3) == 0 {
				ch[key] = slot{gone: true}
				delete(model, key)
			} else {
				ch[key] = slot{files: filesNamed(key, step+1)}
				model[key] = ch[key].files
			}
		}
		layers := len(o.layers)
		o = o.with(ch)
		if layers > 0 && len(o.layers) == 0 {
			compactions++
		}
		deepest = max(deepest, len(o.layers))
		requireOutputs(t, model, o, keys, fmt.Sprint("step ", step))
		history, models = append(history, o), append(models, maps.Clone(model))
	}
	require.Greater(t, compactions, 5, "the layers are folded into a new base again and again")
	require.Greater(t, deepest, 2, "changes pile up in several layers")
	require.LessOrEqual(t, deepest, 16, "layers are merged as they pile up")
	for i, old := range history {
		requireOutputs(t, models[i], old, keys, fmt.Sprint("earlier value ", i))
	}
}

func requireOutputs(t *testing.T, want map[string]Files, o Outputs, keys []string, where string) {
	t.Helper()
	require.Equal(t, len(want), o.Len(), where)
	for _, key := range keys {
		files, ok := o.Get(key)
		if w, in := want[key]; in != ok || w != files {
			t.Fatalf("%s: %s is %v %v, want %v %v", where, key, files, ok, w, in)
		}
	}
	seen := map[string]bool{}
	for key, files := range o.All() {
		if seen[key] || want[key] != files {
			t.Fatalf("%s: %s yielded twice or with other files", where, key)
		}
		seen[key] = true
	}
	require.Len(t, seen, len(want), where)
}

func TestOutputsWithoutChangeIsTheSame(t *testing.T) {
	o := NewOutputs(map[string]Files{"a": filesNamed("a", 0)})
	require.Equal(t, o, o.with(layer{}))
	var zero Outputs
	require.Zero(t, zero.Len())
	require.Empty(t, zero.Map())
	grown := zero.with(layer{"a": {files: filesNamed("a", 1)}, "b": {gone: true}})
	require.Equal(t, map[string]Files{"a": filesNamed("a", 1)}, grown.Map())
	require.Zero(t, zero.Len(), "the zero value is not changed")
}

func TestOutputsOnlyAndEarlyStop(t *testing.T) {
	o := NewOutputs(map[string]Files{"a": filesNamed("a", 0), "b": filesNamed("b", 0), "c": filesNamed("c", 0)})
	o = o.with(layer{"b": {gone: true}, "d": {files: filesNamed("d", 1)}})
	require.Equal(t, map[string]Files{"a": filesNamed("a", 0), "d": filesNamed("d", 1)}, o.Only([]string{"a", "b", "d", "x"}).Map())
	n := 0
	for range o.All() {
		n++
		break
	}
	require.Equal(t, 1, n)
	n = 0
	for range o.Keys() {
		n++
		break
	}
	require.Equal(t, 1, n)
}

// TestOutputsForkedValuesAreIndependent derives two values from one: each has its own change
// only, and the one they come from neither.
func TestOutputsForkedValuesAreIndependent(t *testing.T) {
	base := map[string]Files{}
	for i := range 64 {
		key := fmt.Sprint("k", i)
		base[key] = filesNamed(key, 0)
	}
	a := NewOutputs(maps.Clone(base)).with(layer{"k1": {gone: true}})
	left := a.with(layer{"k2": {files: filesNamed("k2", 1)}})
	right := a.with(layer{"k2": {gone: true}, "new": {files: filesNamed("new", 1)}})
	wantA := maps.Clone(base)
	delete(wantA, "k1")
	wantLeft, wantRight := maps.Clone(wantA), maps.Clone(wantA)
	wantLeft["k2"] = filesNamed("k2", 1)
	delete(wantRight, "k2")
	wantRight["new"] = filesNamed("new", 1)
	require.Equal(t, wantA, a.Map())
	require.Equal(t, wantLeft, left.Map())
	require.Equal(t, wantRight, right.Map())
	require.Equal(t, []int{63, 63, 63}, []int{a.Len(), left.Len(), right.Len()})
}
