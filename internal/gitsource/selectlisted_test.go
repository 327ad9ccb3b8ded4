package gitsource

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Selecting a source's files from the listing of its folder gives what walking the folders of
// its FS gives (scheduling.WalkFiles): the same files in the same order, the same limit errors,
// for random trees whose names sort differently as git orders them and as folders are walked
// (a folder a beside a file a.yaml), with .git folders, files of other kinds, a .sourceignore
// and the folder read at the root, in a folder, or as the source's root.
func TestSelectListedEqualsWalk(t *testing.T) {
	dirs := []string{"a", "a-b", "a.b", "b", ".git", "A", "z.yaml", ".sourceignore"}
	names := []string{"a.yaml", "b.yml", "c.txt", "A.yaml", "a-b.yaml", "a.b.yaml", "a0.yaml", ".sourceignore"}
	listedOnes := 0
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 3))
		files := map[string]string{}
		for range 1 + rng.IntN(25) {
			parts := make([]string, rng.IntN(4))
			for i := range parts {
				parts[i] = dirs[rng.IntN(len(dirs))]
			}
			name := names[rng.IntN(len(names))]
			body := "# " + strings.Repeat("x", rng.IntN(300)) + "\n"
			if name == ".sourceignore" {
				body = []string{"a/\n", "*.yml\n", "# nothing\n"}[rng.IntN(3)]
			}
			files[strings.Join(append(parts, name), "/")] = body
		}
		repo, err := git.Init(memory.NewStorage(), nil)
		require.NoError(t, err)
		head := commitFiles(t, repo, plumbing.ZeroHash, files, time.Unix(0, 0))
		for _, opt := range []Option{Under(""), Under("a"), Under("a/b"), Under("z.yaml"), Root("a"), Root("a/a-b")} {
			for _, pol := range []scheduling.Policy{{}, {MaxSourceFiles: 5}, {MaxFileBytes: 150, MaxSourceBytes: 1000}} {
				var o treeOptions
				opt(&o)
				Limits(pol)(&o)
				where := fmt.Sprintf("seed %d, under %q root %q, %+v, files %v", seed, o.under, o.root, pol, files)
				key, under, err := sourceAt(repo, head, &o)
				require.NoError(t, err)
				entries, listed, err := listSource(repo, key, under, &o)
				require.NoError(t, err)
				made := newTreeFS()
				for name, e := range entries {
					made.MapFS[name] = &fstest.MapFile{Mode: 0o644}
					made.large[name] = e.size
				}
				if ignore, ok := entries[o.ignoreFile()]; ok && scheduling.CheckFileSize(ignore.size, o.policy) == nil {
					require.NoError(t, made.read(repo, nil, entries, o.ignoreFile()))
				}
				fast, fastErr := readSourceAs(repo, key, under, &o, true)
				slow, slowErr := readSourceAs(repo, key, under, &o, false)
				require.Equal(t, slowErr, fastErr, where)
				if slowErr == nil {
					require.Equal(t, slow.MapFS, fast.MapFS, where)
					require.Equal(t, slow.large, fast.large, where)
					require.Equal(t, slow.hashes, fast.hashes, where)
					require.Equal(t, slow.refused, fast.refused, where)
					require.Equal(t, remembered(t, slow, &o), remembered(t, fast, &o), where)
				}
				got, ok, gotErr := selectListed(listed, key, &o)
				if !ok {
					continue
				}
				listedOnes++
				want, wantErr := made.selectWhileMade(o.root, o.relativeUnder(), o.policy)
				require.Equal(t, wantErr, gotErr, where)
				require.Equal(t, want, got, where)
			}
		}
	}
	require.Greater(t, listedOnes, 1000, "most sources are selected from their listing")
}

// remembered is what a load selects of a source read with o, as it was remembered while the
// source was read.
func remembered(t *testing.T, fsys treeFS, o *treeOptions) selection {
	src := fsys
	if o.root != "" {
		sub, err := fsys.Sub(o.root)
		require.NoError(t, err)
		src = sub.(treeFS)
	}
	s, ok := src.memo.selected[selectKey{dir: o.relativeUnder(), limits: limitsOf(o.policy)}]
	require.True(t, ok, "the selection is remembered")
	return s
}
