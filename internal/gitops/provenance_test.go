package gitops

import (
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/require"
)

func TestReadProvenanceOfTheAppsCommitAndOfItsMerge(t *testing.T) {
	repo, err := git.PlainInit(t.TempDir(), true)
	require.NoError(t, err)
	tree, err := Edit(repo, plumbing.ZeroHash, map[string][]byte{"README.md": []byte("gitops")})
	require.NoError(t, err)
	base, err := Commit(repo, tree, plumbing.ZeroHash, "Initial\n", time.Unix(100, 0))
	require.NoError(t, err)
	tree, err = Edit(repo, tree, map[string][]byte{"env/.github/tracking/Promoted_Commit_Id": []byte("m1\n")})
	require.NoError(t, err)
	app, err := Commit(repo, tree, base, "Kalypso: update environment dev\n\nKalypso-Environment: dev\n"+
		"Kalypso-Source: main m1\nKalypso-Source: dev d1\nKalypso-Source: workload platform svc w1\n", time.Unix(200, 0))
	require.NoError(t, err)

	p, err := ReadProvenance(repo, app, "env")
	require.NoError(t, err)
	require.Equal(t, Provenance{Main: "m1", Sources: [][2]string{{"main", "m1"}, {"dev", "d1"}, {"workload platform svc", "w1"}},
		Committed: time.Unix(200, 0).UTC()}, p)

	merge := &object.Commit{Author: object.Signature{Name: "GitHub", When: time.Unix(300, 0)}, Committer: object.Signature{Name: "GitHub", When: time.Unix(300, 0)},
		Message: "Merge pull request #1 from kalypso/dev\n", TreeHash: tree, ParentHashes: []plumbing.Hash{base, app}}
	obj := repo.Storer.NewEncodedObject()
	require.NoError(t, merge.Encode(obj))
	mergeHash, err := repo.Storer.SetEncodedObject(obj)
	require.NoError(t, err)
	p, err = ReadProvenance(repo, mergeHash, "env")
	require.NoError(t, err)
	require.Equal(t, "m1", p.Main)
	require.Len(t, p.Sources, 3, "the trailers of the commit the merge brought in")
	require.Equal(t, time.Unix(300, 0).UTC(), p.Committed)

	p, err = ReadProvenance(repo, base, "env")
	require.NoError(t, err)
	require.Empty(t, p.Main)
	require.Empty(t, p.Sources)
	_, err = ReadProvenance(repo, plumbing.NewHash("1111111111111111111111111111111111111111"), "")
	require.Error(t, err)
}
