package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kalypso-gitops/kalypso/render"
)

// errNotDir is returned for a --gitops-dir that is not a folder.
var errNotDir = errors.New("not a directory")

// readTree reads every regular file below dir (except .git) into a tree; symbolic links are
// not followed. A missing dir is an error.
func readTree(dir string) (render.Tree, error) {
	tree := render.Tree{}
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("read %s: %w", dir, errNotDir)
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		tree[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	return tree, nil
}

// readOutTree reads the tree of render --out: a missing folder is an empty tree.
func readOutTree(dir string) (render.Tree, error) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return render.Tree{}, nil
	}
	return readTree(dir)
}

// errSymlinkedFolder is returned when a folder render would write into is a symbolic link.
var errSymlinkedFolder = errors.New("is a symbolic link: render does not write through symbolic links")

// writeTree makes dir hold next instead of prev: new files are written, changed ones replaced
// atomically (see folderWriter), removed ones deleted (each named on log) along with folders
// left empty.
func writeTree(dir string, prev render.Tree, next *render.Desired, log io.Writer) (written, removed int, err error) {
	prevPaths := prev.SortedPaths()
	w, err := newFolderWriter(dir, prevPaths)
	if err != nil {
		return 0, 0, err
	}
	err = next.Walk(func(p string, content []byte) error {
		old, exists := prev[p]
		if exists && bytes.Equal(old, content) {
			return nil
		}
		if err := w.write(p, content, exists); err != nil {
			return err
		}
		written++
		return nil
	})
	if err != nil {
		return written, removed, err
	}
	for _, p := range prevPaths {
		if next.Has(p) {
			continue
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return written, removed, fmt.Errorf("remove %s: %w", full, err)
		}
		fmt.Fprintf(log, "removed %s\n", p)
		removed++
		pruneEmpty(dir, filepath.Dir(full))
	}
	return written, removed, nil
}

// pruneEmpty removes empty folders from d up to (not including) root.
func pruneEmpty(root, d string) {
	root = filepath.Clean(root)
	for d = filepath.Clean(d); d != root && strings.HasPrefix(d, root); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			return
		}
	}
}
