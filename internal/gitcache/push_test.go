package gitcache

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/gitops"
)

// A push sends the objects on the changed paths only (the commit, the folders on the way to a
// change, the changed files), whatever the size of the tree, and git accepts the pack: every
// object the new commit refers to is on the remote after it.
func TestPushSendsOnlyTheChange(t *testing.T) {
	bare, url := bareRemote(t)
	ctx := context.Background()
	c := New("", url)
	repo, err := c.fetch(ctx, "o", "r", "", "main")
	require.NoError(t, err)
	files := map[string][]byte{}
	for i := range 200 {
		files[fmt.Sprintf("ct/t-%03d/a.yaml", i)] = []byte(fmt.Sprintf("a %d", i))
		files[fmt.Sprintf("ct/t-%03d/b.yaml", i)] = []byte(fmt.Sprintf("b %d", i))
	}
	tree, err := gitops.Edit(repo, plumbing.ZeroHash, files)
	require.NoError(t, err)
	base, err := gitops.Commit(repo, tree, plumbing.ZeroHash, "base\n", time.Unix(0, 0))
	require.NoError(t, err)
	all, err := newObjects(repo.Storer, base)
	require.NoError(t, err)
	require.Len(t, all, 1+2+200+400, "a first push sends everything: commit, root and ct trees, folders, files")
	require.NoError(t, c.push(ctx, "o", "r", "", "main", base, plumbing.ZeroHash))

	next, err := gitops.Edit(repo, tree, map[string][]byte{"ct/t-007/a.yaml": []byte("changed"), "ct/t-500/a.yaml": []byte("new"), "ct/t-100/b.yaml": nil})
	require.NoError(t, err)
	child, err := gitops.Commit(repo, next, base, "child\n", time.Unix(1, 0))
	require.NoError(t, err)
	sent, err := newObjects(repo.Storer, child, base)
	require.NoError(t, err)
	// the commit; the root, ct, t-007, t-100 and t-500 trees; the changed and the new file
	require.Len(t, sent, 1+5+2, "only the objects on the changed paths")
	require.NoError(t, c.push(ctx, "o", "r", "", "main", child, base))

	out, err := exec.Command("git", "--git-dir", bare, "fsck", "--strict", "--no-dangling").CombinedOutput()
	require.NoError(t, err, string(out))
	out, err = exec.Command("git", "--git-dir", bare, "rev-parse", "main").Output()
	require.NoError(t, err)
	require.Equal(t, child.String(), strings.TrimSpace(string(out)))
	require.Equal(t, child, Head(repo, "main"), "the remote-tracking branch follows the push")

	again, err := gitops.Commit(repo, next, base, "the same tree again\n", time.Unix(2, 0))
	require.NoError(t, err)
	sent, err = newObjects(repo.Storer, again, child)
	require.NoError(t, err)
	require.Equal(t, []plumbing.Hash{again}, sent, "a commit of a tree the remote has sends the commit alone")
}

// The cache counts what it holds as objects come in: a fetch adds what it brings, writing an
// object already held adds nothing, and nothing is measured again.
func TestSizeIsCountedAsObjectsComeIn(t *testing.T) {
	_, url := bareRemote(t)
	ctx := context.Background()
	writer := New("", url)
	repo, err := writer.fetch(ctx, "o", "r", "", "main")
	require.NoError(t, err)
	before := repositoryBytes(repo)
	h := commit(t, repo, plumbing.ZeroHash, strings.Repeat("x", 1000))
	grown := repositoryBytes(repo)
	require.Greater(t, grown-before, int64(1000), "the blob, the tree and the commit are counted")
	_ = commit(t, repo, plumbing.ZeroHash, strings.Repeat("x", 1000))
	require.Equal(t, grown, repositoryBytes(repo), "objects written again are not counted again")
	require.NoError(t, writer.push(ctx, "o", "r", "", "main", h, plumbing.ZeroHash))
	require.Equal(t, grown, writer.Size(), "the size after the push is what was counted")

	for _, dir := range []string{"", filepath.Join(t.TempDir(), "disk")} {
		reader := New(dir, url)
		_, err := reader.fetch(ctx, "o", "r", "", "main")
		require.NoError(t, err)
		require.Positive(t, reader.Size(), "dir %q: the fetched objects are counted", dir)
		if dir == "" {
			require.Equal(t, grown, reader.Size(), "in memory, the objects' sizes")
		}
	}
}

// bareRemote serves an empty bare repository o/r and returns its folder and the URL of the
// server.
func bareRemote(t *testing.T) (bare, url string) {
	t.Helper()
	root := t.TempDir()
	bare = filepath.Join(root, "o", "r.git")
	require.NoError(t, exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).Run())
	return bare, server(t, root)
}
