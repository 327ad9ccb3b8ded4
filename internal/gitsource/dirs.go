package gitsource

import (
	"io/fs"
	"path"
	"slices"
	"strings"
)

// dirIndex lists the entries of each folder of a treeFS, made in one pass over its files, so
// that walking the folders costs their entries (fstest.MapFS looks at every file for each
// folder).
type dirIndex map[string][]fs.DirEntry

// indexDirs makes the index of t's folders ("." is the root).
func indexDirs(t treeFS) dirIndex {
	idx := dirIndex{".": nil}
	for name := range t.MapFS {
		idx.add(t, name, false)
	}
	for _, entries := range idx {
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	return idx
}

// add adds name to its folder's entries, and its folders to theirs when they are new.
func (idx dirIndex) add(t treeFS, name string, isDir bool) {
	dir := path.Dir(name)
	_, known := idx[dir]
	idx[dir] = append(idx[dir], dirEntry{fsys: t, name: name, dir: isDir})
	if !known && dir != "." {
		idx.add(t, dir, true)
	}
}

// readDir returns the entries of folder name, as fs.ReadDirFS does.
func (idx dirIndex) readDir(name string) ([]fs.DirEntry, error) {
	entries, ok := idx[name]
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	return slices.Clone(entries), nil
}

// dirEntry is an entry of a treeFS folder.
type dirEntry struct {
	fsys treeFS
	name string // the path in fsys
	dir  bool
}

func (e dirEntry) Name() string { return path.Base(e.name) }
func (e dirEntry) IsDir() bool  { return e.dir }
func (e dirEntry) Type() fs.FileMode {
	if e.dir {
		return fs.ModeDir
	}
	return 0
}
func (e dirEntry) Info() (fs.FileInfo, error) { return e.fsys.Stat(e.name) }
