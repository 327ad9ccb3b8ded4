package gitops

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
)

func TestEditTouchesOnlyChangedFoldersAndMatchesGit(t *testing.T) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, true)
	require.NoError(t, err)
	base, err := Edit(repo, plumbing.ZeroHash, map[string][]byte{
		"README.md": []byte("root"), "a/README.md": []byte("a"), "a/x/r.yaml": []byte("r1"),
		"a/y/r.yaml": []byte("r2"), "b/README.md": []byte("b"), ".github/w.yaml": []byte("w"), "a-b/z": []byte("z"),
	})
	require.NoError(t, err)
	c1, err := Commit(repo, base, plumbing.ZeroHash, "base\n", time.Unix(0, 0))
	require.NoError(t, err)

	next, err := Edit(repo, base, map[string][]byte{
		"a/x/r.yaml": []byte("r1 changed"), "a/y/r.yaml": nil, "c/d/e.yaml": []byte("new"), "b/README.md": nil,
	})
	require.NoError(t, err)
	c2, err := Commit(repo, next, c1, "next\n", time.Unix(0, 0))
	require.NoError(t, err)

	paths, tree, err := Paths(repo, c2)
	require.NoError(t, err)
	require.Equal(t, next, tree)
	want := map[string]string{"README.md": "root", "a/README.md": "a", "a/x/r.yaml": "r1 changed", ".github/w.yaml": "w", "a-b/z": "z", "c/d/e.yaml": "new"}
	require.Len(t, paths, len(want))
	for p, content := range want {
		require.Equal(t, BlobHash([]byte(content)), paths[p], p)
	}
	require.True(t, Same(repo, c2, next, c1))
	require.False(t, Same(repo, c2, next, c2))
	require.False(t, Same(repo, c2, base, c1))

	// git itself agrees that the objects are well formed and sorted.
	out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict", c2.String()).CombinedOutput()
	require.NoError(t, err, string(out))
	out, err = exec.Command("git", "--git-dir", dir, "ls-tree", "-r", "--name-only", c2.String()).Output()
	require.NoError(t, err)
	require.Equal(t, ".github/w.yaml\nREADME.md\na-b/z\na/README.md\na/x/r.yaml\nc/d/e.yaml", strings.TrimSpace(string(out)))
}
