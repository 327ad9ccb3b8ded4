package envref

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// reader is a Reader over fixed data that counts what it reads.
type reader struct {
	repos  []Repo
	envs   map[Repo][]EnvInfo
	reads  int
	failOn Repo
}

func (r *reader) Repositories(context.Context, int64) ([]Repo, error) { return r.repos, nil }

func (r *reader) Describe(_ context.Context, _ int64, repo Repo) ([]EnvInfo, error) {
	r.reads++
	if repo == r.failOn {
		return nil, errors.New("unreadable")
	}
	return r.envs[repo], nil
}

var (
	cpA, cpB, other = Repo{"o", "a"}, Repo{"o", "b"}, Repo{"o", "other"}
	gitops          = Repo{"o", "gitops"}
)

func env(cp Repo, name, branch string) EnvInfo {
	return EnvInfo{Env: Env{Installation: 1, ControlPlane: cp, Name: name}, GitOps: gitops, GitOpsBranch: branch}
}

func newReader() *reader {
	return &reader{repos: []Repo{cpB, cpA, other}, envs: map[Repo][]EnvInfo{
		cpA:   {env(cpA, "dev", "dev"), env(cpA, "stage", "stage")},
		cpB:   {env(cpB, "dev", "dev"), env(cpB, "qa", "kalypso/stage")},
		other: {env(other, "prod", "prod")},
	}}
}

func TestIndexReadsOnlyDeclaredControlPlanes(t *testing.T) {
	ctx := context.Background()
	r := newReader()
	ix := NewIndex(r, func(repo Repo) bool { return repo != other })
	envs, err := ix.Environments(ctx, 1)
	require.NoError(t, err)
	var names []string
	for _, e := range envs {
		names = append(names, e.Env.ControlPlane.Name+"/"+e.Env.Name)
	}
	require.Equal(t, []string{"a/dev", "a/stage", "b/dev", "b/qa"}, names, "sorted by control plane and name")
	require.Equal(t, 2, r.reads, "the undeclared repository is never read")
	_, err = ix.Environments(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, 2, r.reads, "a cache")
	ok, err := ix.IsControlPlane(ctx, 1, other)
	require.NoError(t, err)
	require.False(t, ok)

	r.envs[cpA] = nil // cpA no longer declares environments
	require.NoError(t, ix.Refresh(ctx, 1, cpA))
	ok, _ = ix.IsControlPlane(ctx, 1, cpA)
	require.False(t, ok)
	require.NoError(t, ix.Refresh(ctx, 1, other), "undeclared: nothing to read")
	r.failOn = cpB
	require.Error(t, ix.Refresh(ctx, 1, cpB))
	ix.Forget(1)
	envs, err = ix.Environments(ctx, 1)
	require.NoError(t, err)
	require.Empty(t, envs, "an unreadable control plane is left out until it can be read")
}

func TestClaim(t *testing.T) {
	ctx := context.Background()
	ix := NewIndex(newReader(), func(repo Repo) bool { return repo != other })
	cases := map[string]struct {
		env    Env
		gitops Repo
		base   string
		want   error
	}{
		"its own branch":                      {Env{1, cpA, "dev"}, gitops, "dev", nil},
		"the first to name a branch owns it":  {Env{1, cpB, "dev"}, gitops, "dev", ErrClaimed},
		"a base that is another's app branch": {Env{1, cpB, "qa"}, gitops, "kalypso/stage", ErrClaimed},
		"another repository":                  {Env{1, cpB, "dev"}, Repo{"o", "elsewhere"}, "dev", nil},
		"a new environment on a free branch":  {Env{1, cpB, "new"}, gitops, "new", nil},
		"an undeclared control plane":         {Env{1, other, "prod"}, gitops, "prod", ErrUndeclared},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := ix.Claim(ctx, tc.env, tc.gitops, tc.base)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestReadsWorkloadAndRepoOf(t *testing.T) {
	e := EnvInfo{Workloads: []RepoBranch{{Repo: other, Branch: "main"}}}
	require.True(t, e.ReadsWorkload(other, "main"))
	require.False(t, e.ReadsWorkload(other, "dev"))
	r, err := RepoOf("https://github.example.com/org/repo.git")
	require.NoError(t, err)
	require.Equal(t, Repo{"org", "repo"}, r)
	require.Equal(t, "kalypso/dev", AppBranch("dev"))
	require.Equal(t, "org/repo/dev", Env{ControlPlane: r, Name: "dev"}.Key())
}

// gatedReader is a Reader safe for concurrent use whose Describe can be held mid-read.
type gatedReader struct {
	mu      sync.Mutex
	envs    map[Repo][]EnvInfo
	gate    chan struct{} // when set, Describe waits for it to close
	entered chan struct{}
}

func (r *gatedReader) Repositories(context.Context, int64) ([]Repo, error) {
	return []Repo{cpA, cpB}, nil
}

func (r *gatedReader) Describe(_ context.Context, _ int64, repo Repo) ([]EnvInfo, error) {
	r.mu.Lock()
	gate, entered := r.gate, r.entered
	envs := r.envs[repo]
	r.mu.Unlock()
	if gate != nil {
		entered <- struct{}{}
		<-gate
	}
	return envs, nil
}

// A refresh that is still reading when the resync forgets the installation neither crashes nor
// publishes into the dropped index: the next reader builds it again from what GitHub says now.
func TestIndexRefreshRacingForget(t *testing.T) {
	ctx := context.Background()
	r := &gatedReader{envs: map[Repo][]EnvInfo{cpA: {env(cpA, "dev", "dev")}, cpB: {env(cpB, "qa", "qa")}}}
	ix := NewIndex(r, func(Repo) bool { return true })
	_, err := ix.Environments(ctx, 1)
	require.NoError(t, err)

	r.mu.Lock()
	r.gate, r.entered = make(chan struct{}), make(chan struct{}, 1)
	gate := r.gate
	r.mu.Unlock()
	refreshed := make(chan error, 1)
	go func() { refreshed <- ix.Refresh(ctx, 1, cpA) }()
	<-r.entered
	ix.Forget(1)
	r.mu.Lock()
	r.gate = nil
	r.envs[cpA] = []EnvInfo{env(cpA, "dev", "dev"), env(cpA, "stage", "stage")}
	r.mu.Unlock()
	close(gate)
	require.NoError(t, <-refreshed)

	envs, err := ix.Environments(ctx, 1)
	require.NoError(t, err)
	require.Len(t, envs, 3, "rebuilt from the current state")
}

// Readers, refreshes, rebuilds and forgets of one installation run at once without a data race
// (run with -race) and every reader sees a complete snapshot.
func TestIndexConcurrentUse(t *testing.T) {
	ctx := context.Background()
	r := &gatedReader{envs: map[Repo][]EnvInfo{cpA: {env(cpA, "dev", "dev"), env(cpA, "stage", "stage")}, cpB: {env(cpB, "qa", "qa")}}}
	ix := NewIndex(r, func(Repo) bool { return true })
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for i := range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 5 {
			case 0:
				errs <- ix.Refresh(ctx, 1, cpA)
			case 1:
				errs <- ix.Rebuild(ctx, 1)
			case 2:
				ix.Forget(1)
			case 3:
				envs, err := ix.Environments(ctx, 1)
				if err == nil && len(envs) != 3 {
					err = fmt.Errorf("a reader saw %d environments", len(envs))
				}
				errs <- err
			default:
				_, err := ix.IsControlPlane(ctx, 1, cpB)
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
