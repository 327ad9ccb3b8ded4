package promote

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/gitops"
)

func TestClickRefusal(t *testing.T) {
	const m1, m2, m3 = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222", "3333333333333333333333333333333333333333"
	valid := click{Env: "stage", SHA: m2, Offered: true, Pinned: m1, Upstream: "dev", UpstreamOK: true, Newest: m2}
	cases := map[string]struct {
		edit func(*click)
		want error
	}{
		"the newest candidate, forward":                 {func(*click) {}, nil},
		"nothing pinned yet":                            {func(c *click) { c.Pinned = "" }, nil},
		"the upstream pin is still on its way":          {func(c *click) { c.Newest = "" }, nil},
		"no upstream environment":                       {func(c *click) { *c = click{Env: "stage", SHA: m2, Offered: true} }, nil},
		"a replay: the button is gone":                  {func(c *click) { c.Offered = false }, ErrNotOffered},
		"a replay of a used button":                     {func(c *click) { c.Offered, c.Pinned = false, m2 }, ErrNotOffered},
		"already pinned":                                {func(c *click) { c.Pinned = m2 }, ErrAlreadyPinned},
		"older than the pin (M1 after M2)":              {func(c *click) { c.Pinned, c.Behind = m3, true }, ErrBehind},
		"not deployed upstream":                         {func(c *click) { c.UpstreamOK = false }, ErrNotCandidate},
		"a newer commit is deployed upstream":           {func(c *click) { c.Newest = m3 }, ErrNewerCandidate},
		"older than the pin wins over newer candidates": {func(c *click) { c.Behind, c.Newest = true, m3 }, ErrBehind},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := valid
			tc.edit(&c)
			err := c.refusal()
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
			for _, other := range []error{ErrNotOffered, ErrAlreadyPinned, ErrBehind, ErrNotCandidate, ErrNewerCandidate} {
				if other != tc.want {
					require.False(t, errors.Is(err, other), "only %v", tc.want)
				}
			}
		})
	}
}

func TestOffersPromotion(t *testing.T) {
	run := func(status, conclusion string) *github.CheckRun {
		return &github.CheckRun{Status: &status, Conclusion: &conclusion}
	}
	require.True(t, offersPromotion(run("completed", "action_required")))
	require.False(t, offersPromotion(run("completed", "success")), "used")
	require.False(t, offersPromotion(run("completed", "neutral")), "refused or withdrawn")
	require.False(t, offersPromotion(run("in_progress", "")))
}

// history builds a linear branch of commits, each recording a promoted main commit.
func history(t *testing.T, promoted ...string) (*git.Repository, []plumbing.Hash) {
	t.Helper()
	repo, err := git.Init(memory.NewStorage(), nil)
	require.NoError(t, err)
	var out []plumbing.Hash
	parent, tree := plumbing.ZeroHash, plumbing.ZeroHash
	for i, main := range promoted {
		tree, err = gitops.Edit(repo, tree, map[string][]byte{".github/tracking/Promoted_Commit_Id": []byte(main + "\n"), "n": {byte(i)}})
		require.NoError(t, err)
		parent, err = gitops.Commit(repo, tree, parent, "c", time.Unix(int64(i), 0))
		require.NoError(t, err)
		out = append(out, parent)
	}
	return repo, out
}

func TestIsAncestor(t *testing.T) {
	repo, c := history(t, "a", "b", "c")
	require.True(t, isAncestor(repo, c[0].String(), c[2].String()))
	require.False(t, isAncestor(repo, c[2].String(), c[0].String()), "a descendant")
	require.False(t, isAncestor(repo, c[1].String(), c[1].String()), "the same commit")
	require.False(t, isAncestor(repo, "", c[1].String()))
	require.False(t, isAncestor(repo, c[0].String(), strings.Repeat("9", 40)), "unknown")
}

func TestMergeOf(t *testing.T) {
	repo, c := history(t, "m1", "m1", "m2", "m2", "m2")
	promoted := func(h plumbing.Hash) string {
		return strings.TrimSpace(string(gitops.ReadFile(repo, h, ".github/tracking/Promoted_Commit_Id")))
	}
	require.Equal(t, c[2], mergeOf(repo, c[4], "m2", promoted), "the oldest commit that promotes m2")
	require.Equal(t, c[0], mergeOf(repo, c[1], "m1", promoted), "down to the root")
	require.Equal(t, c[4], mergeOf(repo, c[4], "", promoted))
}
