package render

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
)

// A skeleton is the content of a file with every occurrence of a string (the assignment's
// namespace) cut out: b[:n] is the text that remains, followed by the offsets in it where the
// string was, 4 bytes each (little-endian), in order. It is made from the content and the
// string alone, so equal contents with the same string give equal skeletons.
type skeleton struct {
	b []byte // never nil, so that an empty file is an empty, non-nil slice
	n int
}

// minCut is the length a namespace must exceed to be cut out: each cut costs 4 bytes.
const minCut = 4

// text is the skeleton's text, which is the content when it has no cuts.
func (s *skeleton) text() []byte { return s.b[:s.n:s.n] }

// cuts is how many times the string was cut out.
func (s *skeleton) cuts() int { return (len(s.b) - s.n) / 4 }

// size is the length of the content with ns put back.
func (s *skeleton) size(ns string) int { return s.n + s.cuts()*len(ns) }

// appendTo appends the content, ns put back at every cut, to dst.
func (s *skeleton) appendTo(dst []byte, ns string) []byte {
	text, prev := s.b[:s.n], 0
	for i := s.n; i < len(s.b); i += 4 {
		at := int(binary.LittleEndian.Uint32(s.b[i:]))
		dst = append(append(dst, text[prev:at]...), ns...)
		prev = at
	}
	return append(dst, text[prev:]...)
}

// content returns the content with ns put back, the text itself when there is no cut.
func (s *skeleton) content(ns string) []byte {
	if s.cuts() == 0 {
		return s.text()
	}
	return s.appendTo(make([]byte, 0, s.size(ns)), ns)
}

// maxShared bounds how many skeletons a cutter remembers for sharing; past it, it starts
// afresh (sharing is what keeps outputs small, never what makes them right).
const maxShared = 1 << 16

// cutter makes the skeletons of the files an executor renders and shares equal ones. It is
// used by one goroutine at a time; its zero value makes skeletons without sharing them.
type cutter struct {
	seed    maphash.Seed
	shared  map[uint64][]*skeleton // by hash of b
	scratch []byte
	ns      []byte
}

func newCutter() *cutter {
	return &cutter{seed: maphash.MakeSeed(), shared: map[uint64][]*skeleton{}}
}

// files makes the Files of an assignment from the contents of its reconciler, namespace and
// platform config (left out when empty), cutting ns out of them when it is long enough.
func (c *cutter) files(contents [3][]byte, ns string, shell bool) Files {
	if len(ns) <= minCut {
		ns = ""
	}
	c.ns = append(c.ns[:0], ns...)
	f := Files{rec: c.skeleton(contents[0]), nsf: c.skeleton(contents[1]), shell: shell}
	if len(contents[2]) > 0 {
		f.cfg = c.skeleton(contents[2])
	}
	for _, s := range [3]*skeleton{f.rec, f.nsf, f.cfg} {
		if s != nil && s.cuts() > 0 {
			f.ns = ns
		}
	}
	return f
}

// skeleton returns the skeleton of content with c.ns cut out: a shared one when the cutter
// has made an equal one.
func (c *cutter) skeleton(content []byte) *skeleton {
	b := c.scratch[:0]
	var cuts [64]uint32
	at := cuts[:0]
	if len(c.ns) > 0 && len(content) <= math.MaxUint32 {
		for {
			i := bytes.Index(content, c.ns)
			if i < 0 {
				break
			}
			b = append(b, content[:i]...)
			at = append(at, uint32(len(b)))
			content = content[i+len(c.ns):]
		}
	}
	b = append(b, content...)
	n := len(b)
	for _, x := range at {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	c.scratch = b
	if c.shared == nil {
		return &skeleton{b: append(make([]byte, 0, len(b)), b...), n: n}
	}
	h := maphash.Bytes(c.seed, b)
	for _, s := range c.shared[h] {
		if s.n == n && bytes.Equal(s.b, b) {
			return s
		}
	}
	s := &skeleton{b: append(make([]byte, 0, len(b)), b...), n: n}
	if len(c.shared) >= maxShared {
		clear(c.shared)
	}
	c.shared[h] = append(c.shared[h], s)
	return s
}
