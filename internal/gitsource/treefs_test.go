package gitsource

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

func commitFiles(t *testing.T, repo *git.Repository, parent plumbing.Hash, files map[string]string, when time.Time) plumbing.Hash {
	t.Helper()
	base := plumbing.ZeroHash
	if !parent.IsZero() {
		c, err := repo.CommitObject(parent)
		require.NoError(t, err)
		base = c.TreeHash
	}
	edits := map[string][]byte{}
	for p, body := range files {
		edits[p] = []byte(body)
		if body == "" {
			edits[p] = nil
		}
	}
	tree, err := gitops.Edit(repo, base, edits)
	require.NoError(t, err)
	h, err := gitops.Commit(repo, tree, parent, "change\n", when)
	require.NoError(t, err)
	return h
}

// TreeFS reads only the folder it is asked for, and leaves files above the limit unread:
// they are listed with their real size and fail to open with ErrTooLarge.
func TestTreeFSReadsOnlyWhatIsNeeded(t *testing.T) {
	repo, err := git.Init(memory.NewStorage(), nil)
	require.NoError(t, err)
	head := commitFiles(t, repo, plumbing.ZeroHash, map[string]string{
		"deploy/w.yaml":       "kind: Workload\n",
		"deploy/sub/big.yaml": strings.Repeat("x", 5000),
		"other/secret.yaml":   "kind: ConfigMap\n",
		".sourceignore":       "tmp/\n",
		"deploy/readme.md":    "not yaml",
	}, time.Unix(0, 0))
	fsys, err := TreeFS(repo, head, Under("deploy"), MaxFileBytes(1000))
	require.NoError(t, err)
	data, err := fs.ReadFile(fsys, "deploy/w.yaml")
	require.NoError(t, err)
	require.Equal(t, "kind: Workload\n", string(data))
	_, err = fs.Stat(fsys, "other/secret.yaml")
	require.ErrorIs(t, err, fs.ErrNotExist, "files outside the folder are not read")
	_, err = fs.Stat(fsys, ".sourceignore")
	require.NoError(t, err, ".sourceignore at the root is kept")

	info, err := fs.Stat(fsys, "deploy/sub/big.yaml")
	require.NoError(t, err)
	require.Equal(t, int64(5000), info.Size(), "a large file reports its real size")
	_, err = fs.ReadFile(fsys, "deploy/sub/big.yaml")
	require.True(t, errors.Is(err, ErrTooLarge), "%v", err)
	_, err = fsys.Open("deploy/sub/big.yaml")
	require.ErrorIs(t, err, ErrTooLarge)

	sub, err := Sub(fsys, "deploy")
	require.NoError(t, err)
	_, err = fs.ReadFile(sub, "sub/big.yaml")
	require.ErrorIs(t, err, ErrTooLarge, "a sub-tree keeps refusing it")
	info, err = fs.Stat(sub, "sub/big.yaml")
	require.NoError(t, err)
	require.Equal(t, int64(5000), info.Size())
}

// Age counts the commits since which a file has existed without interruption.
func TestAge(t *testing.T) {
	repo, err := git.Init(memory.NewStorage(), nil)
	require.NoError(t, err)
	c1 := commitFiles(t, repo, plumbing.ZeroHash, map[string]string{"regs/a.yaml": "a"}, time.Unix(100, 0))
	c2 := commitFiles(t, repo, c1, map[string]string{"regs/b.yaml": "b"}, time.Unix(100, 0))
	c3 := commitFiles(t, repo, c2, map[string]string{"regs/a.yaml": ""}, time.Unix(100, 0))
	c4 := commitFiles(t, repo, c3, map[string]string{"regs/a.yaml": "a again"}, time.Unix(100, 0))
	require.Equal(t, 2, Age(repo, c2, "regs/a.yaml"))
	require.Equal(t, 3, Age(repo, c4, "regs/b.yaml"))
	require.Equal(t, 1, Age(repo, c4, "regs/a.yaml"), "re-added: counted from its return")
	require.Equal(t, 0, Age(repo, c3, "regs/a.yaml"), "absent")
}

// TreeFS decides what it reads from the sizes in the objects' headers, as loading does: a
// commit naming one blob at a hundred paths is over the source's limit (each path counts),
// and none of them is read into memory; a source within its limits is read whole.
func TestTreeFSRefusesASourceOverItsLimitWithoutReadingIt(t *testing.T) {
	repo, err := git.Init(memory.NewStorage(), nil)
	require.NoError(t, err)
	blob := "# " + strings.Repeat("x", 40_000) + "\n"
	files := map[string]string{".sourceignore": "ignored/\n", "ignored/huge.yaml": strings.Repeat("y", 1<<20), "deploy/w.yaml": "kind: Workload\n"}
	for i := range 100 {
		files[fmt.Sprintf("deploy/copy-%03d.yaml", i)] = blob
	}
	head := commitFiles(t, repo, plumbing.ZeroHash, files, time.Unix(0, 0))
	limits := scheduling.Policy{MaxSourceBytes: 1 << 20}

	fsys, err := TreeFS(repo, head, Under("deploy"), Limits(limits))
	require.NoError(t, err)
	require.ErrorIs(t, fsys.(scheduling.Refuser).Refused(), scheduling.ErrSourceTooLarge)
	for name, f := range fsys.(treeFS).MapFS {
		if name != ".sourceignore" {
			require.Empty(t, f.Data, "%s is not read", name)
		}
	}
	_, err = fs.ReadFile(fsys, "deploy/w.yaml")
	require.ErrorIs(t, err, scheduling.ErrSourceTooLarge)
	_, err = scheduling.SelectFiles(fsys, "deploy", limits)
	require.ErrorIs(t, err, scheduling.ErrSourceTooLarge, "loading reports the same breach")
	sub, err := Sub(fsys, "deploy")
	require.NoError(t, err)
	require.ErrorIs(t, sub.(scheduling.Refuser).Refused(), scheduling.ErrSourceTooLarge)

	limits.MaxSourceBytes = int64(100*len(blob) + len("kind: Workload\n"))
	fsys, err = TreeFS(repo, head, Under("deploy"), Limits(limits))
	require.NoError(t, err, "the ignored megabyte does not count")
	require.NoError(t, fsys.(scheduling.Refuser).Refused())
	data, err := fs.ReadFile(fsys, "deploy/copy-042.yaml")
	require.NoError(t, err)
	require.Equal(t, blob, string(data))
	_, err = fs.Stat(fsys, "ignored/huge.yaml")
	require.ErrorIs(t, err, fs.ErrNotExist, "an ignored file is not read")

	fsys, err = TreeFS(repo, head, Root("deploy"), Limits(limits))
	require.NoError(t, err, "a source rooted at a folder counts only that folder")
	sub, err = Sub(fsys, "deploy")
	require.NoError(t, err)
	selected, err := scheduling.SelectFiles(sub, "", limits)
	require.NoError(t, err)
	require.Len(t, selected, 101)
}

// TreeFS gives each file it read its blob hash as content address, in a sub-tree too, and
// none to a file it left unread.
func TestTreeFSGivesBlobHashes(t *testing.T) {
	repo, err := git.Init(memory.NewStorage(), nil)
	require.NoError(t, err)
	head := commitFiles(t, repo, plumbing.ZeroHash, map[string]string{
		"deploy/w.yaml":   "kind: Workload\n",
		"deploy/big.yaml": strings.Repeat("x", 5000),
	}, time.Unix(0, 0))
	fsys, err := TreeFS(repo, head, MaxFileBytes(1000))
	require.NoError(t, err)
	want := plumbing.ComputeHash(plumbing.BlobObject, []byte("kind: Workload\n")).String()
	hash, ok := fsys.(scheduling.FileHasher).FileHash("deploy/w.yaml")
	require.True(t, ok)
	require.Equal(t, want, hash)
	_, ok = fsys.(scheduling.FileHasher).FileHash("deploy/big.yaml")
	require.False(t, ok, "a file left unread has no address")

	sub, err := Sub(fsys, "deploy")
	require.NoError(t, err)
	hash, ok = sub.(scheduling.FileHasher).FileHash("w.yaml")
	require.True(t, ok)
	require.Equal(t, want, hash)
}

// Through a cache, which finds the source of a commit once, each read of a commit seen before
// still gets what its folder and limits select.
func TestTreeFSThroughACacheFollowsTheOptions(t *testing.T) {
	repo, err := git.Init(memory.NewStorage(), nil)
	require.NoError(t, err)
	head := commitFiles(t, repo, plumbing.ZeroHash, map[string]string{
		"a/x.yaml": "kind: Workload\n",
		"b/y.yaml": "kind: ConfigMap\n" + strings.Repeat("#", 2000) + "\n",
	}, time.Unix(0, 0))
	cache := NewCache()
	for round := range 2 {
		for _, c := range []struct {
			dir, present, absent string
			maxFile              int64
			large                bool
		}{{"a", "a/x.yaml", "b/y.yaml", 0, false}, {"b", "b/y.yaml", "a/x.yaml", 0, false}, {"b", "b/y.yaml", "a/x.yaml", 1000, true}} {
			fsys, err := TreeFS(repo, head, Under(c.dir), WithCache(cache), MaxFileBytes(c.maxFile))
			require.NoError(t, err)
			_, err = fs.ReadFile(fsys, c.present)
			if c.large {
				require.ErrorIs(t, err, ErrTooLarge, "round %d %s: the file limit applies", round, c.dir)
			} else {
				require.NoError(t, err, "round %d %s", round, c.dir)
			}
			_, err = fs.Stat(fsys, c.absent)
			require.ErrorIs(t, err, fs.ErrNotExist, "round %d %s", round, c.dir)
		}
		cache.Sweep()
	}
}
