package gitops

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"io"
	"sort"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Objects are hashed here with the standard SHA-1: they are the app's own output, not objects
// received from elsewhere, so go-git's collision-detecting SHA-1 (several times slower) would
// only cost time; the hashes are the same.

// hashObject is the git object id of content of type t.
func hashObject(t plumbing.ObjectType, content []byte) plumbing.Hash {
	h := sha1.New()
	var header [32]byte
	hdr := append(append(append(header[:0], t.Bytes()...), ' '), strconv.Itoa(len(content))...)
	h.Write(append(hdr, 0))
	h.Write(content)
	var out plumbing.Hash
	h.Sum(out[:0])
	return out
}

// encodeTree is the content of a tree object with these entries, which must be in git's order
// (see sortEntries).
func encodeTree(entries []object.TreeEntry) []byte {
	n := 0
	for _, e := range entries {
		n += len(e.Name) + 28
	}
	buf := make([]byte, 0, n)
	for _, e := range entries {
		buf = append(buf, modeText(e.Mode)...)
		buf = append(buf, ' ')
		buf = append(buf, e.Name...)
		buf = append(buf, 0)
		buf = append(buf, e.Hash[:]...)
	}
	return buf
}

// modeText is how a tree entry writes its mode: octal, without leading zeros.
func modeText(m filemode.FileMode) string {
	switch m {
	case filemode.Dir:
		return "40000"
	case filemode.Regular:
		return "100644"
	}
	return strconv.FormatUint(uint64(m), 8)
}

// sortEntries puts tree entries in git's order: folders sort as if their name ended with "/".
func sortEntries(entries []object.TreeEntry) {
	sort.Slice(entries, func(i, j int) bool { return lessEntry(entries[i], entries[j]) })
}

func lessEntry(a, b object.TreeEntry) bool {
	an, bn := a.Name, b.Name
	n := min(len(an), len(bn))
	if c := bytes.Compare([]byte(an[:n]), []byte(bn[:n])); c != 0 {
		return c < 0
	}
	return entryByte(a, n) < entryByte(b, n)
}

// entryByte is the byte of an entry's name at i as git compares it: "/" just past the end of a
// folder's name, 0 past the end of a file's.
func entryByte(e object.TreeEntry, i int) byte {
	switch {
	case i < len(e.Name):
		return e.Name[i]
	case e.Mode == filemode.Dir:
		return '/'
	}
	return 0
}

// ownObject is an object the app made, its hash computed once: blobs share their content with
// the rendered output instead of copying it.
type ownObject struct {
	t    plumbing.ObjectType
	h    plumbing.Hash
	data []byte
}

func newObject(t plumbing.ObjectType, data []byte) *ownObject {
	return &ownObject{t: t, h: hashObject(t, data), data: data}
}

var errReadOnly = errors.New("object is read-only")

// Hash implements plumbing.EncodedObject.
func (o *ownObject) Hash() plumbing.Hash { return o.h }

// Type implements plumbing.EncodedObject.
func (o *ownObject) Type() plumbing.ObjectType { return o.t }

// SetType implements plumbing.EncodedObject; the object's type does not change.
func (o *ownObject) SetType(plumbing.ObjectType) {}

// Size implements plumbing.EncodedObject.
func (o *ownObject) Size() int64 { return int64(len(o.data)) }

// SetSize implements plumbing.EncodedObject; the object's size does not change.
func (o *ownObject) SetSize(int64) {}

// Reader implements plumbing.EncodedObject.
func (o *ownObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.data)), nil
}

// Writer implements plumbing.EncodedObject: the object cannot be written to.
func (o *ownObject) Writer() (io.WriteCloser, error) { return nil, errReadOnly }

// store writes an object unless the storage already has it.
func store(s storer.EncodedObjectStorer, o *ownObject) error {
	if s.HasEncodedObject(o.h) == nil {
		return nil
	}
	_, err := s.SetEncodedObject(o)
	return err
}
