package gitsource

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrTooLarge is returned when a file of a tree is larger than the MaxFileBytes option.
var ErrTooLarge = errors.New("file is larger than the limit")

// Option narrows what TreeFS reads.
type Option func(*treeOptions)

type treeOptions struct {
	under    string // only files below this folder ("" is the whole tree)
	maxBytes int64  // files larger than this are listed but not read (0: no limit)
}

// Under reads only the files below dir.
func Under(dir string) Option {
	return func(o *treeOptions) { o.under = strings.Trim(dir, "/") }
}

// MaxFileBytes leaves files larger than n bytes unread: they are listed, report their real
// size, and fail to open with ErrTooLarge, so that a huge file never enters memory.
func MaxFileBytes(n int64) Option {
	return func(o *treeOptions) { o.maxBytes = n }
}

func (o *treeOptions) wants(f *object.File) bool {
	if o.under == "" {
		return true
	}
	return f.Name == o.under || strings.HasPrefix(f.Name, o.under+"/") || f.Name == ".sourceignore"
}

// treeFS is the files read from a tree, with the ones too large to read.
type treeFS struct {
	fstest.MapFS
	large map[string]int64 // path → size of files left unread
}

// Open implements fs.FS.
func (t treeFS) Open(name string) (fs.File, error) {
	if err := t.refuse("open", name); err != nil {
		return nil, err
	}
	return t.MapFS.Open(name)
}

// ReadFile implements fs.ReadFileFS.
func (t treeFS) ReadFile(name string) ([]byte, error) {
	if err := t.refuse("read", name); err != nil {
		return nil, err
	}
	return t.MapFS.ReadFile(name)
}

// Stat implements fs.StatFS, giving the real size of files left unread.
func (t treeFS) Stat(name string) (fs.FileInfo, error) {
	if size, ok := t.large[name]; ok {
		return largeInfo{name: path.Base(name), size: size}, nil
	}
	return t.MapFS.Stat(name)
}

// Sub implements fs.SubFS so that sub-trees keep refusing large files.
func (t treeFS) Sub(dir string) (fs.FS, error) {
	sub := treeFS{MapFS: fstest.MapFS{}, large: map[string]int64{}}
	prefix := dir + "/"
	for p, f := range t.MapFS {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			sub.MapFS[rest] = f
		}
	}
	for p, size := range t.large {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			sub.large[rest] = size
		}
	}
	return sub, nil
}

func (t treeFS) refuse(op, name string) error {
	if size, ok := t.large[name]; ok {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: %d bytes, limit exceeded (setting sources.maxFileBytes)", ErrTooLarge, size)}
	}
	return nil
}

// largeInfo describes a file left unread.
type largeInfo struct {
	name string
	size int64
}

func (i largeInfo) Name() string       { return i.name }
func (i largeInfo) Size() int64        { return i.size }
func (i largeInfo) Mode() fs.FileMode  { return 0o644 }
func (i largeInfo) ModTime() time.Time { return time.Time{} }
func (i largeInfo) IsDir() bool        { return false }
func (i largeInfo) Sys() any           { return nil }
