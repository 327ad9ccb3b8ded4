package gitsource

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

func environmentDoc(name, branch string) string {
	return fmt.Sprintf("apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata:\n  name: %s\nspec:\n  controlPlane:\n    repo: https://github.com/o/cp\n    branch: %s\n    path: .\n", name, branch)
}

// The declarations of main are parsed once per content of its .environments folder, its
// .sourceignore and the limits: a change elsewhere in main reuses them; a change of any of
// these gives what reading main from scratch gives, never the declarations kept.
func TestDeclarationsFollowTheirFolder(t *testing.T) {
	repo, err := git.Init(memory.NewStorage(), nil)
	require.NoError(t, err)
	when := time.Unix(1_700_000_000, 0).UTC()
	head := plumbing.ZeroHash
	commit := func(files map[string]string) {
		when = when.Add(time.Second)
		head = commitFiles(t, repo, head, files, when)
	}
	cache := NewCache()
	read := func(opts ...Option) *scheduling.Declarations {
		t.Helper()
		d, err := declarations(repo, head, append(opts, WithCache(cache)))
		require.NoError(t, err)
		fresh, err := declarations(repo, head, opts)
		require.NoError(t, err)
		require.Equal(t, fresh, d, "the declarations are those of main as it is")
		cache.Sweep()
		return d
	}
	names := func(d *scheduling.Declarations) (out []string) {
		for _, e := range d.Environments {
			out = append(out, e.Name+"@"+e.Spec.ControlPlane.Branch)
		}
		return out
	}

	commit(map[string]string{".environments/dev.yaml": environmentDoc("dev", "dev"), "templates/t.yaml": "kind: Other\n"})
	first := read()
	require.Equal(t, []string{"dev@dev"}, names(first))

	commit(map[string]string{"templates/t.yaml": "kind: Other\nchanged: true\n"})
	require.Same(t, first, read(), "a change outside .environments parses nothing of it")

	commit(map[string]string{".environments/dev.yaml": environmentDoc("dev", "develop")})
	require.Equal(t, []string{"dev@develop"}, names(read()), "a changed declaration")

	commit(map[string]string{".environments/prod.yaml": environmentDoc("prod", "prod")})
	require.Equal(t, []string{"dev@develop", "prod@prod"}, names(read()), "an added declaration")

	commit(map[string]string{".sourceignore": ".environments/prod.yaml\n"})
	require.Equal(t, []string{"dev@develop"}, names(read()), "a declaration ignored")

	small := read(MaxFileBytes(50))
	require.Empty(t, small.Environments, "declarations over the file size limit")
	require.NotEmpty(t, small.Errors)
	require.Equal(t, []string{"dev@develop"}, names(read()), "the limits again")

	refused := read(Limits(scheduling.Policy{MaxSourceFiles: 1}))
	require.Empty(t, refused.Environments, "main over the source's limit")
	require.NotEmpty(t, refused.Errors)

	commit(map[string]string{".environments/bad.yaml": "kind: Environment\nmetadata: {name: bad}\nspec: {unknown: 1}\n"})
	kept := read()
	require.NotEmpty(t, kept.Errors)
	errs := errorsOf(kept)
	errs[0] = &scheduling.Error{Msg: "changed by a caller"}
	require.NotEqual(t, "changed by a caller", errorsOf(read())[0].Msg, "the errors a caller is given are its own")
}
