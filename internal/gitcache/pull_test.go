package gitcache_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitfake"
)

// FetchPull prefers GitHub's test merge, falls back to the head, and keeps pull refs apart
// from branches: a branch named like one cannot stand in for it.
func TestFetchPullPrefersTheTestMerge(t *testing.T) {
	remotes := gitfake.New(t)
	repo := envref.Repo{Owner: "o", Name: "r"}
	base := remotes.Commit(repo, "main", map[string]*string{"a": gitfake.Str("1")}, "base")
	head := remotes.Commit(repo, "feature", map[string]*string{"a": gitfake.Str("2")}, "head")
	merge := remotes.Commit(repo, "merged", map[string]*string{"a": gitfake.Str("3")}, "merge")
	decoy := remotes.Commit(repo, "pull/1/head", map[string]*string{"a": gitfake.Str("evil")}, "decoy")
	require.NotEqual(t, base, head)
	cache := gitcache.New("", remotes.URL())
	fetch := func(n int) (string, string, error) {
		var sha, which string
		err := cache.Use(context.Background(), gitcache.Remote{Owner: "o", Name: "r"}, nil, func(s *gitcache.Session) error {
			h, w, err := s.FetchPull(n)
			sha, which = h.String(), w
			return err
		})
		return sha, which, err
	}

	_, _, err := fetch(1)
	require.True(t, errors.Is(err, gitcache.ErrNoPull), "a branch named pull/1/head is not the pull request: %v", err)
	remotes.SetRef(repo, "refs/pull/1/head", head)
	sha, which, err := fetch(1)
	require.NoError(t, err)
	require.Equal(t, []string{head, "head"}, []string{sha, which})
	remotes.SetRef(repo, "refs/pull/1/merge", merge)
	sha, which, err = fetch(1)
	require.NoError(t, err)
	require.Equal(t, []string{merge, "merge"}, []string{sha, which})
	require.NotEqual(t, decoy, sha)
	_, _, err = fetch(0)
	require.ErrorIs(t, err, gitcache.ErrNoPull)
}
