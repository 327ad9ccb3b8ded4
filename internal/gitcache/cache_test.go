package gitcache

import (
	"context"
	"errors"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/gitops"
)

// server serves bare repositories below root over smart HTTP with git-http-backend.
func server(t *testing.T, root string) string {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	require.NoError(t, err)
	h := &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=test"}}
	srv := httptest.NewServer(http.StripPrefix("", h))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestFetchPushAndLease(t *testing.T) {
	root := t.TempDir()
	bare := filepath.Join(root, "o", "r.git")
	require.NoError(t, exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).Run())
	url := server(t, root)
	ctx := context.Background()

	a := New(filepath.Join(t.TempDir(), "a"), url)
	b := New(filepath.Join(t.TempDir(), "b"), url)
	repoA, err := a.fetch(ctx, "o", "r", "", "main")
	require.NoError(t, err)
	require.True(t, Head(repoA, "main").IsZero(), "an empty repository has no branches")

	first := commit(t, repoA, plumbing.ZeroHash, "one")
	require.NoError(t, a.push(ctx, "o", "r", "", "main", first, plumbing.ZeroHash), "creating a branch")
	require.NoError(t, a.push(ctx, "o", "r", "", "main", first, plumbing.ZeroHash), "the same push again changes nothing")
	rival := commit(t, repoA, plumbing.ZeroHash, "rival")
	require.ErrorIs(t, a.push(ctx, "o", "r", "", "main", rival, plumbing.ZeroHash), ErrStale, "creating an existing branch loses")

	repoB, err := b.fetch(ctx, "o", "r", "", "main")
	require.NoError(t, err)
	require.Equal(t, first, Head(repoB, "main"))

	second := commit(t, repoA, first, "two")
	require.NoError(t, a.push(ctx, "o", "r", "", "main", second, first))
	other := commit(t, repoB, first, "other")
	err = b.push(ctx, "o", "r", "", "main", other, first)
	require.True(t, errors.Is(err, ErrStale), "a replica with an old view loses the race: %v", err)

	repoB, err = b.fetch(ctx, "o", "r", "", "main")
	require.NoError(t, err)
	require.Equal(t, second, Head(repoB, "main"), "after a fetch it sees the winner")
	_, err = repoB.Reference(plumbing.NewBranchReferenceName("main"), false)
	require.Error(t, err, "pushes leave no local branch behind, only remote-tracking refs")

	require.NoError(t, b.push(ctx, "o", "r", "", "kalypso/dev", second, plumbing.ZeroHash))
	repoA, err = a.fetch(ctx, "o", "r", "", "main", "kalypso/dev")
	require.NoError(t, err)
	require.Equal(t, second, Head(repoA, "kalypso/dev"))
	require.ErrorIs(t, b.deleteBranch(ctx, "o", "r", "", "kalypso/dev", first), ErrStale, "a delete is leased on the head that was read")
	require.NoError(t, b.deleteBranch(ctx, "o", "r", "", "kalypso/dev", second))
	repoA, err = a.fetch(ctx, "o", "r", "", "main", "kalypso/dev")
	require.NoError(t, err)
	require.True(t, Head(repoA, "kalypso/dev").IsZero(), "deleted branches disappear from the cache too")
	require.Equal(t, second, Head(repoA, "main"))
}

func commit(t *testing.T, repo *git.Repository, parent plumbing.Hash, content string) plumbing.Hash {
	t.Helper()
	base := plumbing.ZeroHash
	if !parent.IsZero() {
		c, err := repo.CommitObject(parent)
		require.NoError(t, err)
		base = c.TreeHash
	}
	tree, err := gitops.Edit(repo, base, map[string][]byte{"f.txt": []byte(content)})
	require.NoError(t, err)
	h, err := gitops.Commit(repo, tree, parent, content+"\n", time.Unix(0, 0))
	require.NoError(t, err)
	return h
}
