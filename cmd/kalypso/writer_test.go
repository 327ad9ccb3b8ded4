package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/render"
)

// writeTreeFrom writes next over what dir holds, as render --out does.
func writeTreeFrom(t *testing.T, dir string, next render.Tree) error {
	t.Helper()
	prev, err := readOutTree(dir)
	require.NoError(t, err)
	_, _, err = writeTree(dir, prev, desiredOf(next), io.Discard)
	return err
}

// desiredOf is a tree as a Desired: the files of a result without a GitOps target.
func desiredOf(tree render.Tree) *render.Desired {
	return (&render.Result{}).Desired(tree)
}

func TestWriterCreatesFoldersAndFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	next := render.Tree{"a/README.md": []byte("r"), "a/b/x.yaml": []byte("x"), "a/b.yaml": []byte("b"), "top": []byte("t")}
	require.NoError(t, writeTreeFrom(t, dir, next))
	got := readDir(t, dir)
	require.Equal(t, map[string]string{"a/README.md": "r", "a/b/x.yaml": "x", "a/b.yaml": "b", "top": "t"}, got)
	st, err := os.Stat(filepath.Join(dir, "a/b/x.yaml"))
	require.NoError(t, err)
	require.Zero(t, st.Mode().Perm()&0o133, "no more than rw-r--r--")
	require.NotZero(t, st.Mode().Perm()&0o600)
}

// A file that exists is replaced by a rename, never written in place: a hard link to the old
// file keeps the old content, and no temporary file is left.
func TestWriterReplacesExistingFilesAtomically(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	require.NoError(t, writeTreeFrom(t, dir, render.Tree{"a/x.yaml": []byte("old")}))
	require.NoError(t, os.Link(filepath.Join(dir, "a/x.yaml"), filepath.Join(elsewhere, "link")))
	require.NoError(t, writeTreeFrom(t, dir, render.Tree{"a/x.yaml": []byte("new")}))
	require.Equal(t, map[string]string{"a/x.yaml": "new"}, readDir(t, dir))
	old, err := os.ReadFile(filepath.Join(elsewhere, "link"))
	require.NoError(t, err)
	require.Equal(t, "old", string(old))
}

// A symbolic link where a new file goes is replaced, not written through.
func TestWriterReplacesASymlinkedFile(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	secret := filepath.Join(elsewhere, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a"), 0o755))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "a/x.yaml")))
	require.NoError(t, writeTreeFrom(t, dir, render.Tree{"a/x.yaml": []byte("new")}))
	got, err := os.ReadFile(secret)
	require.NoError(t, err)
	require.Equal(t, "secret", string(got))
	st, err := os.Lstat(filepath.Join(dir, "a/x.yaml"))
	require.NoError(t, err)
	require.True(t, st.Mode().IsRegular())
	require.Equal(t, map[string]string{"a/x.yaml": "new"}, readDir(t, dir))
}

// A symbolic link where a folder goes, at any depth, is refused; an empty real folder is used.
func TestWriterRefusesSymlinkedFolders(t *testing.T) {
	for _, folder := range []string{"a", "a/b"} {
		t.Run(folder, func(t *testing.T) {
			dir, elsewhere := t.TempDir(), t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, folder)), 0o755))
			require.NoError(t, os.Symlink(elsewhere, filepath.Join(dir, folder)))
			err := writeTreeFrom(t, dir, render.Tree{"a/b/x.yaml": []byte("x")})
			require.True(t, errors.Is(err, errSymlinkedFolder), "%v", err)
			entries, err := os.ReadDir(elsewhere)
			require.NoError(t, err)
			require.Empty(t, entries)
		})
	}
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a/b"), 0o755))
	require.NoError(t, writeTreeFrom(t, dir, render.Tree{"a/b/x.yaml": []byte("x")}))
	require.Equal(t, map[string]string{"a/b/x.yaml": "x"}, readDir(t, dir))
}

// A file where a folder goes is an error naming the path.
func TestWriterFileInTheWayOfAFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("file"), 0o644))
	_, _, err := writeTree(dir, render.Tree{}, desiredOf(render.Tree{"a/x.yaml": []byte("x")}), io.Discard)
	require.True(t, errors.Is(err, errNotDir), "%v", err)
	require.Contains(t, err.Error(), "a/x.yaml")
}

// A leftover temporary file of an interrupted run does not stop a replacement.
func TestWriterSkipsLeftoverTemporaryNames(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, writeTreeFrom(t, dir, render.Tree{"x.yaml": []byte("old")}))
	w, err := newFolderWriter(dir, []string{"x.yaml"})
	require.NoError(t, err)
	leftover := filepath.Join(dir, ".kalypso-1-"+strconv.Itoa(os.Getpid()))
	require.NoError(t, os.WriteFile(leftover, []byte("leftover"), 0o644))
	require.NoError(t, w.write("x.yaml", []byte("new"), true))
	got, err := os.ReadFile(filepath.Join(dir, "x.yaml"))
	require.NoError(t, err)
	require.Equal(t, "new", string(got))
	left, err := os.ReadFile(leftover)
	require.NoError(t, err)
	require.Equal(t, "leftover", string(left))
}
