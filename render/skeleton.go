package render

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"

	"github.com/kalypso-gitops/kalypso/scheduling"
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
	seed   maphash.Seed
	shared map[uint64][]*skeleton // by hash of b

	byTarget   map[*scheduling.DeploymentTarget]*[2]recent // each target's last reconcilers and namespaces
	lastConfig *skeleton                                   // the previous folder's platform config
	scratch    []byte
	ns         []byte // the namespace cut out
	anchor     int    // the offset of the byte of ns that find looks for
}

// find appends to at the offsets of the leftmost non-overlapping occurrences of c.ns in
// content. It looks for the byte of c.ns least likely to be frequent in a manifest, then
// compares c.ns around it.
func (c *cutter) find(content []byte, at []int) []int {
	ns, k := c.ns, c.anchor
	for i := k; i < len(content); {
		j := bytes.IndexByte(content[i:], ns[k])
		if j < 0 {
			break
		}
		start := i + j - k
		if bytes.HasPrefix(content[start:], ns) {
			at = append(at, start)
			i = start + len(ns) + k
			continue
		}
		i += j + 1
	}
	return at
}

// anchor is the offset in ns of the byte to look for first: a digit if there is one, else
// an upper-case letter or a rarer punctuation, else its last byte; the last of equals.
func anchor(ns []byte) int {
	best, rank := 0, 4
	for i, b := range ns {
		if r := byteRank(b); r <= rank {
			best, rank = i, r
		}
	}
	return best
}

// byteRank guesses how often a byte occurs in a manifest: 0 for rarely, 3 for often.
func byteRank(b byte) int {
	switch {
	case b >= '0' && b <= '9':
		return 0
	case b >= 'A' && b <= 'Z', b == '_':
		return 1
	case b >= 'a' && b <= 'z', b == '-', b == ' ', b == ':', b == '\n', b == '"', b == '/', b == '.':
		return 3
	default:
		return 2
	}
}

func newCutter() *cutter {
	return &cutter{seed: maphash.MakeSeed(), shared: map[uint64][]*skeleton{}, byTarget: map[*scheduling.DeploymentTarget]*[2]recent{}}
}

// files makes the Files of an assignment of target from the contents of its reconciler,
// namespace and platform config (left out when empty), cutting ns out of them when it is long
// enough. The skeletons tried first are the target's last reconciler and namespace, and the
// previous folder's platform config (a cluster type's assignments come one after the other),
// then those of earlier, the assignment's output in an earlier result (nil for none), looked
// up only when the first ones are not the right ones.
func (c *cutter) files(contents [3][]byte, ns string, shell bool, target *scheduling.DeploymentTarget, earlier *earlierOutput) Files {
	if len(ns) <= minCut {
		ns = ""
	}
	c.ns = append(c.ns[:0], ns...)
	c.anchor = anchor(c.ns)
	hints := c.byTarget[target]
	if hints == nil {
		hints = &[2]recent{}
		if c.byTarget != nil {
			c.byTarget[target] = hints
		}
	}
	f := Files{rec: hints[0].skeleton(c, contents[0], earlier, 0), nsf: hints[1].skeleton(c, contents[1], earlier, 1), shell: shell}
	if len(contents[2]) > 0 {
		f.cfg = c.skeleton(contents[2], [2]*skeleton{c.lastConfig}, earlier, 2)
		c.lastConfig = f.cfg
	}
	for _, s := range [3]*skeleton{f.rec, f.nsf, f.cfg} {
		if s != nil && s.cuts() > 0 {
			f.ns = ns
		}
	}
	return f
}

// earlierOutput is the output of an assignment in an earlier result, looked up on first use.
type earlierOutput struct {
	outputs Outputs
	key     string
	files   Files
	looked  bool
}

// skeleton returns the earlier reconciler (file 0), namespace (1) or platform config (2).
func (e *earlierOutput) skeleton(file int) *skeleton {
	if e == nil {
		return nil
	}
	if !e.looked {
		e.looked = true
		if e.outputs.Len() > 0 {
			e.files = e.outputs.of(e.key)
		}
	}
	return [3]*skeleton{e.files.rec, e.files.nsf, e.files.cfg}[file]
}

// recent are the last two skeletons of one kind of file of a target, the last first: a
// target's reconciler alternates when its cluster types alternate between two reconcilers.
type recent [2]*skeleton

// skeleton returns the skeleton of content with c.ns cut out, trying the recent ones before
// earlier's file, and remembers it.
func (r *recent) skeleton(c *cutter, content []byte, earlier *earlierOutput, file int) *skeleton {
	s := c.skeleton(content, *r, earlier, file)
	if s != r[0] {
		r[0], r[1] = s, r[0]
	}
	return s
}

// skeleton returns the skeleton of content with c.ns cut out: the first of the hints (nil
// ones are skipped) that is that, else earlier's file when it is that, else a shared one when
// the cutter has made an equal one.
func (c *cutter) skeleton(content []byte, hints [2]*skeleton, earlier *earlierOutput, file int) *skeleton {
	var found [64]int
	at := found[:0]
	if len(c.ns) > 0 && len(content) <= math.MaxUint32 {
		at = c.find(content, at)
	}
	for _, h := range hints {
		if c.matches(h, content, at) {
			return h
		}
	}
	if e := earlier.skeleton(file); c.matches(e, content, at) {
		return e
	}
	b, n := c.cut(content, at)
	if c.shared == nil {
		return &skeleton{b: append(make([]byte, 0, len(b)), b...), n: n}
	}
	return c.share(b, n)
}

// matches tells whether s is the skeleton of content with c.ns cut out at the offsets at.
func (c *cutter) matches(s *skeleton, content []byte, at []int) bool {
	if s == nil || s.cuts() != len(at) || s.n != len(content)-len(at)*len(c.ns) {
		return false
	}
	text, from, removed := s.b[:s.n], 0, 0
	for k, i := range at {
		if int(binary.LittleEndian.Uint32(s.b[s.n+4*k:])) != i-removed || !bytes.Equal(content[from:i], text[from-removed:i-removed]) {
			return false
		}
		from, removed = i+len(c.ns), removed+len(c.ns)
	}
	return bytes.Equal(content[from:], text[from-removed:])
}

// cut returns content with c.ns cut out at the offsets at, followed by the offsets of the
// cuts in what remains, and the length of what remains, in the cutter's scratch space.
func (c *cutter) cut(content []byte, at []int) ([]byte, int) {
	b, from := c.scratch[:0], 0
	for _, i := range at {
		b = append(b, content[from:i]...)
		from = i + len(c.ns)
	}
	b = append(b, content[from:]...)
	n, removed := len(b), 0
	for _, i := range at {
		b = binary.LittleEndian.AppendUint32(b, uint32(i-removed))
		removed += len(c.ns)
	}
	c.scratch = b
	return b, n
}

// share returns the skeleton b[:n] with cuts b[n:], the one made before when there is one.
func (c *cutter) share(b []byte, n int) *skeleton {
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
