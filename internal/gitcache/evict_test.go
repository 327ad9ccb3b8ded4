package gitcache

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
)

// A cache over its bound drops the least recently used repositories, never the one in use,
// and fetches a dropped one again when it is next needed.
func TestEvictsLeastRecentlyUsed(t *testing.T) {
	for _, dir := range []string{"", "disk"} {
		t.Run("dir="+dir, func(t *testing.T) {
			root := t.TempDir()
			url := server(t, root)
			ctx := context.Background()
			seed := New("", url)
			for _, name := range []string{"a", "b", "c"} {
				bare := filepath.Join(root, "o", name+".git")
				require.NoError(t, exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).Run())
				repo, err := seed.fetch(ctx, "o", name, "", "main")
				require.NoError(t, err)
				require.NoError(t, seed.push(ctx, "o", name, "", "main", commit(t, repo, plumbing.ZeroHash, name), plumbing.ZeroHash))
			}
			cacheDir := ""
			if dir != "" {
				cacheDir = filepath.Join(t.TempDir(), dir)
			}
			probe := New(cacheDir, url)
			_, err := probe.fetch(ctx, "o", "a", "")
			require.NoError(t, err)
			one := probe.Size()
			require.Positive(t, one)

			bounded := ""
			if dir != "" {
				bounded = filepath.Join(t.TempDir(), "bounded")
			}
			c := New(bounded, url, WithMaxBytes(2*one+one/2))
			for _, name := range []string{"a", "b"} {
				_, err := c.fetch(ctx, "o", name, "")
				require.NoError(t, err)
			}
			require.InDelta(t, 2*one, c.Size(), float64(one)/10, "two repositories fit")
			_, err = c.fetch(ctx, "o", "a", "") // a is now the most recently used
			require.NoError(t, err)
			_, err = c.fetch(ctx, "o", "c", "")
			require.NoError(t, err)
			require.LessOrEqual(t, c.Size(), 2*one+one/2, "the cache stays within its bound")
			_, kept := c.budget.size["o/a"]
			_, dropped := c.budget.size["o/b"]
			require.True(t, kept, "the recently used repository stays")
			require.False(t, dropped, "the least recently used repository is evicted")

			repo, err := c.fetch(ctx, "o", "b", "")
			require.NoError(t, err, "an evicted repository is fetched again")
			require.False(t, Head(repo, "main").IsZero())
		})
	}
}

// A repository whose lock is held is never evicted.
func TestBusyRepositoryIsNotEvicted(t *testing.T) {
	c := New("", "http://unused", WithMaxBytes(1))
	repo, err := c.open("o", "busy")
	require.NoError(t, err)
	c.budget.size["o/busy"] = 10
	unlock := c.lock("o", "busy")
	c.evict("o/busy")
	unlock()
	got, ok := c.repos.Load("o/busy")
	require.True(t, ok)
	require.Same(t, repo, got)
	c.evict("o/busy")
	_, ok = c.repos.Load("o/busy")
	require.False(t, ok, "once free it can be evicted")
}
