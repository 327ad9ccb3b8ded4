package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// errSymlink marks a symbolic link found in a directory-mode source folder: directory mode
// reads only regular files and folders, so that a control plane or workload checkout cannot
// make the CLI read files outside the folder it was given.
var errSymlink = errors.New("directory mode does not follow symbolic links; replace it with the file or folder itself")

// linkFreeFS is os.DirFS that refuses every symbolic link below its root, whether it is opened
// or only listed in a folder. The root itself may be a symbolic link: that is the user's choice.
type linkFreeFS struct {
	root    string // the folder, as given
	display string // the folder as shown in messages, ending in "/"
}

// linkFreeDirFS returns the files of dir without following symbolic links.
func linkFreeDirFS(dir string) fs.FS {
	return linkFreeFS{root: dir, display: displayDir(dir)}
}

// Open implements fs.FS.
func (f linkFreeFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if err := f.refuseLinks(name); err != nil {
		return nil, err
	}
	return os.DirFS(f.root).Open(name)
}

// ReadDir implements fs.ReadDirFS; a folder holding a symbolic link is an error naming it.
func (f linkFreeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	if err := f.refuseLinks(name); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(f.full(name))
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			return nil, f.linkError(path.Join(name, e.Name()))
		}
	}
	return entries, nil
}

// refuseLinks fails when name or a folder on the way to it is a symbolic link.
func (f linkFreeFS) refuseLinks(name string) error {
	if name == "." {
		return nil
	}
	parts := strings.Split(name, "/")
	for i := range parts {
		rel := strings.Join(parts[:i+1], "/")
		st, err := os.Lstat(f.full(rel))
		if err != nil {
			return nil // missing: Open reports it
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return f.linkError(rel)
		}
	}
	return nil
}

func (f linkFreeFS) full(rel string) string {
	return filepath.Join(f.root, filepath.FromSlash(rel))
}

func (f linkFreeFS) linkError(rel string) error {
	target, err := os.Readlink(f.full(rel))
	if err != nil {
		target = "?"
	}
	return fmt.Errorf("%s%s is a symbolic link (to %s): %w", f.display, rel, target, errSymlink)
}
