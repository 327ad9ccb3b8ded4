package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// folderWriter writes files below a root folder with as few system calls as the file system
// allows: each folder is created (or checked) once, a file that did not exist is created and
// written in place, and only a file that already exists is replaced through a temporary file
// and a rename, so that it is never seen half-written. It never writes through a symbolic link
// below the root.
type folderWriter struct {
	root    string
	folders map[string]bool // slash folders below root known to be real folders
	lastDir string          // the folder of the previous file, known to be real
	tmpSeq  atomic.Uint64
}

// newFolderWriter prepares writing below root, creating it if missing. The slash paths of
// known are files already present below root through real folders (as readTree reports them),
// so their folders need no check.
func newFolderWriter(root string, known []string) (*folderWriter, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", root, err)
	}
	w := &folderWriter{root: root, folders: map[string]bool{"": true}}
	for _, p := range known {
		for d := slashDir(p); !w.folders[d]; d = slashDir(d) {
			w.folders[d] = true
		}
	}
	return w, nil
}

// slashDir is the folder of a slash path, "" at the top.
func slashDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// write makes the slash path rel hold data. exists tells whether a file is known to be there:
// it is then replaced atomically; otherwise the file is created exclusively and written, and
// if something turns out to be there after all, it is replaced atomically instead.
func (w *folderWriter) write(rel string, data []byte, exists bool) error {
	if err := w.folder(rel, slashDir(rel)); err != nil {
		return err
	}
	full := filepath.Join(w.root, filepath.FromSlash(rel))
	if !exists {
		err := writeNew(full, data)
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("write %s: %w", rel, err)
		}
	}
	if err := w.replace(full, data); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return nil
}

// folder makes sure the slash folder d (of the file rel) exists below root as a real folder.
func (w *folderWriter) folder(rel, d string) error {
	if d == w.lastDir || w.folders[d] {
		w.lastDir = d
		return nil
	}
	if err := w.folder(rel, slashDir(d)); err != nil {
		return err
	}
	full := filepath.Join(w.root, filepath.FromSlash(d))
	if err := os.Mkdir(full, 0o755); errors.Is(err, fs.ErrExist) {
		st, lerr := os.Lstat(full)
		switch {
		case lerr != nil:
			return fmt.Errorf("create folder for %s: %w", rel, lerr)
		case st.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("write %s: %s %w", rel, full, errSymlinkedFolder)
		case !st.IsDir():
			return fmt.Errorf("create folder for %s: %s: %w", rel, full, errNotDir)
		}
	} else if err != nil {
		return fmt.Errorf("create folder for %s: %w", rel, err)
	}
	w.folders[d], w.lastDir = true, d
	return nil
}

// writeNew creates path, which must not exist (else the error is fs.ErrExist), and writes data
// into it; a file it could not write completely is removed. It uses the system calls directly:
// the os package would also try to register each file with the poller, which fails for a
// regular file.
func writeNew(path string, data []byte) error {
	fd, err := ignoringEINTR(func() (int, error) {
		return syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o644)
	})
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	werr := writeAll(fd, data)
	cerr := syscall.Close(fd)
	switch {
	case werr != nil:
		err = &fs.PathError{Op: "write", Path: path, Err: werr}
	case cerr != nil:
		err = &fs.PathError{Op: "close", Path: path, Err: cerr}
	default:
		return nil
	}
	os.Remove(path)
	return err
}

// writeAll writes data to the file descriptor fd.
func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := ignoringEINTR(func() (int, error) { return syscall.Write(fd, data) })
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		data = data[n:]
	}
	return nil
}

// ignoringEINTR calls f again while it is interrupted by a signal.
func ignoringEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if !errors.Is(err, syscall.EINTR) {
			return n, err
		}
	}
}

// replace writes data into a new temporary file next to path and renames it over path, so that
// path holds either its old or its new content, never part of it.
func (w *folderWriter) replace(path string, data []byte) error {
	for {
		tmp := filepath.Join(filepath.Dir(path), ".kalypso-"+strconv.FormatUint(w.tmpSeq.Add(1), 36)+"-"+strconv.Itoa(os.Getpid()))
		err := writeNew(tmp, data)
		if errors.Is(err, fs.ErrExist) {
			continue // a leftover of an interrupted run
		}
		if err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return err
		}
		return nil
	}
}
