package reconcile

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghfake"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitfake"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

var (
	samplePlane    = gitfake.SamplePlane
	sampleWorkload = gitfake.SampleWorkload
	sampleGitOps   = gitfake.SampleGitOps
	sampleDev      = envref.Env{Installation: 1, ControlPlane: samplePlane, Name: "dev"}
)

// seeded is the public Kalypso sample in bare repositories, read through a git cache.
type seeded struct {
	remotes *gitfake.Remotes
	cache   *gitcache.Cache
	main    string
}

func seedSample(t *testing.T) *seeded {
	t.Helper()
	r := gitfake.New(t)
	main := r.SeedSample()
	return &seeded{remotes: r, cache: gitcache.New("", r.URL()), main: main}
}

// racingGit moves a branch of a repository just after the cache fetched it, the first times
// the repository is used: someone else pushed in between.
type racingGit struct {
	*gitcache.Cache
	repo  envref.Repo
	times int
	move  func()
}

func (g *racingGit) Use(ctx context.Context, r gitcache.Remote, branches []string, fn func(*gitcache.Session) error) error {
	return g.Cache.Use(ctx, r, branches, func(s *gitcache.Session) error {
		if r.Owner == g.repo.Owner && r.Name == g.repo.Name && g.times > 0 {
			g.times--
			g.move()
		}
		return fn(s)
	})
}

func TestEnvironmentProposesThenConverges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := seedSample(t)
	g := ghfake.New()
	r := New(s.cache, ghfake.Installations{GitHub: g})

	out, err := r.Environment(ctx, sampleDev)
	require.NoError(t, err)
	require.Equal(t, sampleGitOps, out.GitOps)
	require.Equal(t, "dev", out.Base)
	require.True(t, out.Promoted, "the new main commit is promoted")
	require.Equal(t, s.remotes.Head(sampleGitOps, "kalypso/dev"), out.Commit)
	require.Equal(t, s.remotes.Head(sampleGitOps, "dev"), s.remotes.Parent(sampleGitOps, out.Commit), "one commit on the GitOps branch")
	require.Contains(t, s.remotes.Message(sampleGitOps, out.Commit), "Kalypso-Source: main "+s.main)
	require.Equal(t, s.main, s.remotes.File(sampleGitOps, "kalypso/dev", ".github/tracking/Promoted_Commit_Id"))
	require.Equal(t, []string{"OpenPullRequests", "CreatePullRequest", "AddLabels"}, g.Methods())
	require.Equal(t, "kalypso/dev", g.Pulls[sampleGitOps][0].GetHead().GetRef())

	g.Reset()
	again, err := r.Environment(ctx, sampleDev)
	require.NoError(t, err)
	require.Equal(t, out.Commit, again.Commit, "no change, no commit")
	require.Equal(t, []string{"OpenPullRequests"}, g.Methods(), "no change, no pull request update")
	require.False(t, again.Render.Full, "only what changed is rendered again")
	loaded := r.results.loadCaches(sampleDev)
	require.Zero(t, loaded.parses.Misses(), "no source file is parsed again")
	reads := loaded.trees.LastRound()
	require.Zero(t, reads.SourcesRead, "no source is read again from git")
	require.Zero(t, reads.BlobsRead)
	require.Equal(t, 4, reads.SourcesReused, "the environment branch, main (its declarations, then as pinned) and the workload repository")

	g.Reset()
	s.remotes.SetHead(sampleGitOps, "dev", out.Commit) // the pull request is merged
	merged, err := r.Environment(ctx, sampleDev)
	require.NoError(t, err)
	require.Empty(t, merged.Commit)
	require.Equal(t, []string{"OpenPullRequests", "EditPullRequest"}, g.Methods())
	require.Equal(t, "closed", g.Pulls[sampleGitOps][0].GetState())
	require.Empty(t, s.remotes.Head(sampleGitOps, "kalypso/dev"), "the app's branch is deleted")
}

func TestEnvironmentRetriesALostPush(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lost    int
		wantErr bool
	}{{1, false}, {4, true}} {
		s := seedSample(t)
		g := ghfake.New()
		// Someone else keeps moving the app's branch to new commits of their own.
		moves := 0
		git := &racingGit{Cache: s.cache, repo: sampleGitOps, times: tc.lost, move: func() {
			moves++
			theirs := s.remotes.Commit(sampleGitOps, "elsewhere", map[string]*string{"x": gitfake.Str(fmt.Sprint(moves))}, "theirs")
			s.remotes.SetHead(sampleGitOps, "kalypso/dev", theirs)
		}}
		r := New(git, ghfake.Installations{GitHub: g})
		out, err := r.Environment(context.Background(), sampleDev)
		require.Equal(t, tc.lost, moves)
		if tc.wantErr {
			require.ErrorIs(t, err, gitcache.ErrStale, "four lost races give up")
			continue
		}
		require.NoError(t, err, "after %d lost races", tc.lost)
		require.Equal(t, s.remotes.Head(sampleGitOps, "kalypso/dev"), out.Commit)
		require.Equal(t, 1, g.Count("CreatePullRequest"))
	}
}

func TestEnvironmentRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	claimed := errors.New("claimed")
	cases := map[string]struct {
		edit func(s *seeded, r *Reconciler)
		want string
		is   error
	}{
		"no GitOps branch": {func(s *seeded, _ *Reconciler) { s.remotes.SetHead(sampleGitOps, "dev", "") }, `has no branch "dev"`, nil},
		"claimed by another environment": {func(_ *seeded, r *Reconciler) {
			r.UseClaims(claimFunc(func(envref.Env, envref.Repo, string) error { return claimed }))
		}, "", claimed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := seedSample(t)
			g := ghfake.New()
			r := New(s.cache, ghfake.Installations{GitHub: g})
			tc.edit(s, r)
			_, err := r.Environment(ctx, sampleDev)
			require.Error(t, err)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			require.ErrorContains(t, err, tc.want)
			require.Empty(t, g.Calls(), "nothing is written")
			require.Empty(t, s.remotes.Head(sampleGitOps, "kalypso/dev"))
		})
	}
}

type claimFunc func(envref.Env, envref.Repo, string) error

func (f claimFunc) Claim(_ context.Context, env envref.Env, gitops envref.Repo, base string) error {
	return f(env, gitops, base)
}

func TestValidateRendersMainAtACommitWritingNothing(t *testing.T) {
	t.Parallel()
	s := seedSample(t)
	broken := s.remotes.Commit(samplePlane, "main", map[string]*string{"templates/broken.yaml": gitfake.Str("kind: Template\nmetadata: [\n")}, "Break")
	g := ghfake.New()
	r := New(s.cache, ghfake.Installations{GitHub: g})
	out, err := r.Validate(context.Background(), sampleDev, broken)
	require.NoError(t, err)
	require.NotEmpty(t, out.Result.Errors)
	require.Contains(t, out.Result.Errors[0].Pos.File, "main@"+broken[:7]+":")
	ok, err := r.Validate(context.Background(), sampleDev, s.main)
	require.NoError(t, err)
	require.Empty(t, ok.Result.Errors)
	require.Empty(t, g.Calls())
	require.Empty(t, s.remotes.Head(sampleGitOps, "kalypso/dev"))
}

func TestIndexReadsDeclaredControlPlanes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := seedSample(t)
	g := ghfake.New()
	g.Repos = []envref.Repo{samplePlane, sampleWorkload, sampleGitOps}
	r := New(s.cache, ghfake.Installations{GitHub: g})
	ix := envref.NewIndex(r, func(repo envref.Repo) bool { return repo == samplePlane })
	envs, err := ix.Environments(ctx, 1)
	require.NoError(t, err)
	require.Len(t, envs, 2)
	dev := envs[0]
	require.Equal(t, sampleDev, dev.Env)
	require.Equal(t, "dev", dev.Branch)
	require.Equal(t, sampleGitOps, dev.GitOps)
	require.Equal(t, "dev", dev.GitOpsBranch)
	require.True(t, dev.ReadsWorkload(sampleWorkload, "main"))
	require.NoError(t, ix.Claim(ctx, sampleDev, sampleGitOps, "dev"))
	require.ErrorIs(t, ix.Claim(ctx, envref.Env{Installation: 1, ControlPlane: samplePlane, Name: "qa"}, sampleGitOps, "dev"), envref.ErrClaimed)

	infos, err := r.Describe(ctx, 1, envref.Repo{Owner: sample.Owner, Name: "missing"})
	require.Error(t, err, "a repository that does not exist cannot be read")
	require.Empty(t, infos)

	g.Fail("Repositories", errors.New("boom"))
	ix.Forget(1)
	_, err = ix.Environments(ctx, 1)
	require.ErrorContains(t, err, "list repositories of installation 1")
}
