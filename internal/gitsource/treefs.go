package gitsource

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// ErrTooLarge is returned when a file of a tree is larger than the file size limit.
var ErrTooLarge = scheduling.ErrFileTooLarge

// Option narrows what TreeFS reads.
type Option func(*treeOptions)

type treeOptions struct {
	under  string            // only files below this folder ("" is the whole tree)
	root   string            // the folder the source is: its .sourceignore applies ("" is the tree's root)
	policy scheduling.Policy // the limits of one source
	cache  *Cache            // what earlier reads found (nil: none)
}

// Under reads only the files below dir, as a workload source of that folder is read: the
// .sourceignore at the root of the tree applies.
func Under(dir string) Option {
	return func(o *treeOptions) { o.under = strings.Trim(dir, "/") }
}

// Root reads the folder dir as a source of its own, as an environment branch whose control
// plane path is dir is read: only files below dir, with dir's .sourceignore.
func Root(dir string) Option {
	return func(o *treeOptions) {
		o.root = strings.Trim(path.Clean("/"+dir), "/")
		o.under = o.root
	}
}

// MaxFileBytes leaves files larger than n bytes unread: they are listed, report their real
// size, and fail to open with ErrTooLarge, so that a huge file never enters memory.
func MaxFileBytes(n int64) Option {
	return func(o *treeOptions) { o.policy.MaxFileBytes = n }
}

// Limits bounds what is read as loading a source bounds it: the files of one source
// together (scheduling.SelectFiles) and each file.
func Limits(p scheduling.Policy) Option {
	return func(o *treeOptions) { o.policy = p }
}

// wants tells whether a file of the tree is below the folder read, or the .sourceignore that applies.
func (o *treeOptions) wants(name string) bool {
	return o.under == "" || name == o.under || strings.HasPrefix(name, o.under+"/") || name == o.ignoreFile()
}

// ignoreFile is the path of the .sourceignore that applies.
func (o *treeOptions) ignoreFile() string { return path.Join(o.root, ".sourceignore") }

// relativeUnder is the folder read, relative to the source's root.
func (o *treeOptions) relativeUnder() string {
	rel := strings.TrimPrefix(strings.TrimPrefix(o.under, o.root), "/")
	return rel
}

// treeFS is the files read from a tree, with the ones too large to read. It never changes once
// made, so that a Cache hands the same one to every read of the same tree: what is derived from
// it (the files a load selects, its folders) is kept with it.
type treeFS struct {
	fstest.MapFS
	large   map[string]int64         // path → size of files left unread
	refused error                    // why no file of the source was read (a breach of its limits)
	hashes  map[string]plumbing.Hash // path → blob of the files read
	memo    *treeMemo
}

func newTreeFS() treeFS {
	return treeFS{MapFS: fstest.MapFS{}, large: map[string]int64{}, hashes: map[string]plumbing.Hash{}, memo: &treeMemo{}}
}

// treeMemo keeps what was derived from a treeFS.
type treeMemo struct {
	mu       sync.Mutex
	selected map[selectKey]selection
	subs     map[string]fs.FS
	dirs     dirIndex
	pin      *string // the commit BaseRepo "main" pins, once found
}

// ReadDir implements fs.ReadDirFS from an index of the folders, made once per tree.
func (t treeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if t.memo == nil { // being made
		return t.MapFS.ReadDir(name)
	}
	t.memo.mu.Lock()
	if t.memo.dirs == nil {
		t.memo.dirs = indexDirs(t)
	}
	idx := t.memo.dirs
	t.memo.mu.Unlock()
	return idx.readDir(name)
}

type selectKey struct {
	dir    string
	limits limits
}

type selection struct {
	files []scheduling.SourceFile
	err   error
}

// SelectFiles implements scheduling.FileSelector: the files a load selects below dir, found
// once per tree (the slice is shared: callers do not change it).
func (t treeFS) SelectFiles(dir string, pol scheduling.Policy) ([]scheduling.SourceFile, error) {
	k := selectKey{dir: dir, limits: limitsOf(pol)}
	t.memo.mu.Lock()
	if s, ok := t.memo.selected[k]; ok {
		t.memo.mu.Unlock()
		return s.files, s.err
	}
	t.memo.mu.Unlock()
	files, err := scheduling.WalkFiles(t, dir, pol)
	t.memo.mu.Lock()
	defer t.memo.mu.Unlock()
	if t.memo.selected == nil {
		t.memo.selected = map[selectKey]selection{}
	}
	t.memo.selected[k] = selection{files: files, err: err}
	return files, err
}

// SourceID implements scheduling.SourceIdentifier: a tree read is never changed, and its memo
// is its own (nil while it is being made).
func (t treeFS) SourceID() any {
	if t.memo == nil {
		return nil
	}
	return t.memo
}

// FileHash implements scheduling.FileHasher: a file's blob hash.
func (t treeFS) FileHash(name string) (string, bool) {
	h, ok := t.hashes[name]
	if !ok {
		return "", false
	}
	return h.String(), true
}

// Refused implements scheduling.Refuser.
func (t treeFS) Refused() error { return t.refused }

// remember keeps what a load selects of t read with o (the selection made while t was made):
// the files below the folder read, from the source's root folder (t's, or the folder t.Sub
// gives for it).
func (t treeFS) remember(o *treeOptions, files []scheduling.SourceFile, err error) {
	src := t
	if o.root != "" {
		sub, _ := t.Sub(o.root)
		src = sub.(treeFS)
	}
	src.memo.mu.Lock()
	defer src.memo.mu.Unlock()
	if src.memo.selected == nil {
		src.memo.selected = map[selectKey]selection{}
	}
	src.memo.selected[selectKey{dir: o.relativeUnder(), limits: limitsOf(o.policy)}] = selection{files: files, err: err}
}

// selectWhileMade is what a load selects below dir of the source rooted at root, while t is
// being made (nothing is kept of it: files are still being read).
func (t treeFS) selectWhileMade(root, dir string, pol scheduling.Policy) ([]scheduling.SourceFile, error) {
	src := t
	if root != "" {
		src = t.sub(root)
	}
	src.memo = &treeMemo{dirs: indexDirs(src)} // thrown away: files are still being read
	return scheduling.WalkFiles(src, dir, pol)
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

// Sub implements fs.SubFS so that sub-trees keep refusing large files. A folder is made once
// per tree.
func (t treeFS) Sub(dir string) (fs.FS, error) {
	t.memo.mu.Lock()
	defer t.memo.mu.Unlock()
	if sub, ok := t.memo.subs[dir]; ok {
		return sub, nil
	}
	sub := t.sub(dir)
	if t.memo.subs == nil {
		t.memo.subs = map[string]fs.FS{}
	}
	t.memo.subs[dir] = sub
	return sub, nil
}

// sub is the part of t below dir.
func (t treeFS) sub(dir string) treeFS {
	sub := newTreeFS()
	sub.refused = t.refused
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
	for p, h := range t.hashes {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			sub.hashes[rest] = h
		}
	}
	return sub
}

func (t treeFS) refuse(op, name string) error {
	if size, ok := t.large[name]; ok {
		err := t.refused
		if err == nil {
			err = fmt.Errorf("%w: %d bytes, over the limit (setting %s)", ErrTooLarge, size, scheduling.SettingMaxFileBytes)
		}
		return &fs.PathError{Op: op, Path: name, Err: err}
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
