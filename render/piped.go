package render

import (
	"strings"
	"sync/atomic"
)

// The config templates of the assignments that share a composed config print the same
// `toYaml .ConfigData | indent 2`. A compiled step that formats composed config (toYaml or
// stringify, piped into indent or nindent or not) takes the text from the composed config,
// where it is made once per step kind, and charges the assignment's function budget what
// the functions would: the formatted text, then the indented text, each refused when it is
// over what is left.

// pipeKey is what a compiled step does to the value it formats.
type pipeKey struct {
	fn, pipe string
	width    int
}

// pipeSlots numbers the distinct pipeKeys of an engine's compiled steps: each composed
// config keeps the text of a step kind in the slot of its number.
type pipeSlots map[pipeKey]int

// slot returns the number of a step kind, numbering a new one.
func (p pipeSlots) slot(k pipeKey) int {
	n, ok := p[k]
	if !ok {
		n = len(p)
		p[k] = n
	}
	return n
}

// format returns the composed config formatted by fn, made once.
func (c *composedConfig) format(fn string) string {
	if fn == "stringify" {
		return c.stringified()
	}
	return c.yaml()
}

// piped returns what step s prints for the composed config, charged to b as the functions
// charge it: the text of s.fn, then, for a pipe, the indented text, checked before it is made.
func (c *composedConfig) piped(s *step, b *budget) (string, error) {
	text := c.format(s.fn)
	if err := b.spend(s.fn, len(text)); err != nil || s.pipe == "" {
		return text, err
	}
	if s.width < 0 {
		return "", errNotCompiled // indent's own error, left to text/template
	}
	slot := &c.pipedTexts[s.slot]
	out := slot.Load()
	if out == nil {
		prefix := pipePrefix(s.pipe)
		if err := b.need(s.pipe, indentedSize(prefix, s.width, text)); err != nil {
			return "", err
		}
		made := indentText(prefix, s.width, text)
		slot.CompareAndSwap(nil, &made)
		out = slot.Load()
	}
	return *out, b.spend(s.pipe, len(*out))
}

// pipePrefix is what a pipe writes before the indented text: nindent a newline.
func pipePrefix(pipe string) string {
	if pipe == "nindent" {
		return "\n"
	}
	return ""
}

// indentText is sprig's indent of s by spaces, after prefix ("\n" for nindent).
func indentText(prefix string, spaces int, s string) string {
	pad := strings.Repeat(" ", spaces)
	return prefix + pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// indentedSize is the length of indentText(prefix, spaces, s), saturated instead of
// overflowing, computed without making it.
func indentedSize(prefix string, spaces int, s string) uint64 {
	lines := uint64(strings.Count(s, "\n")) + 1
	return addSize(uint64(len(s)+len(prefix)), mulSize(lines, uint64(spaces)))
}

// pipedSlots makes the slots of a composed config for an engine's step kinds.
func pipedSlots(n int) []atomic.Pointer[string] {
	return make([]atomic.Pointer[string], n)
}
