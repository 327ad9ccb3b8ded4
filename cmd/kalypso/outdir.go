package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kalypso-gitops/kalypso/render"
)

// readTree reads every file below dir (except .git) into a tree; a missing dir is empty.
func readTree(dir string) (render.Tree, error) {
	tree := render.Tree{}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return tree, nil
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

// writeTree makes dir hold next instead of prev: changed files are replaced atomically,
// removed ones deleted along with folders left empty.
func writeTree(dir string, prev, next render.Tree) (written, removed int, err error) {
	for _, p := range next.SortedPaths() {
		if old, ok := prev[p]; ok && bytes.Equal(old, next[p]) {
			continue
		}
		if err := writeFileAtomic(filepath.Join(dir, filepath.FromSlash(p)), next[p]); err != nil {
			return written, removed, err
		}
		written++
	}
	for _, p := range prev.SortedPaths() {
		if _, ok := next[p]; ok {
			continue
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return written, removed, fmt.Errorf("remove %s: %w", full, err)
		}
		removed++
		pruneEmpty(dir, filepath.Dir(full))
	}
	return written, removed, nil
}

func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create folder for %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kalypso-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
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
