package promote

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitfake"
)

const devAuto, stageAuto, stageManual = "    timeout: 1m\n", "    after: dev\n", "    after: dev\n    approval: manual\n"

func TestPromoteMainPinsTheFirstEnvironments(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageAuto)
	m1 := w.main("a")
	require.NoError(t, w.p.PromoteMain(context.Background(), w.loc("", m1)))
	require.Equal(t, m1, w.pin("dev"))
	require.Equal(t, w.seed, w.pin("stage"), "stage comes after dev")
	head := w.remotes.Head(cp, "dev")
	require.Contains(t, w.remotes.Message(cp, head), "Kalypso-Promoted: "+m1+"\nKalypso-Reason: push to main\n")
	state, desc := w.status("dev", m1)
	require.Equal(t, "pending", state)
	require.Equal(t, descAwaitMerge, desc)
	require.Equal(t, []string{"Statuses", "Statuses", "CreateStatus"}, w.gh.Methods(),
		"the old pin is looked at, and the commit passed over (the chain's declaration), the new one marked")
	require.Equal(t, []string{"dev:dev"}, w.sched.pinned, "the environment is told to follow its branch")

	w.gh.Reset()
	require.NoError(t, w.p.PromoteMain(context.Background(), w.loc("", m1)))
	require.Equal(t, head, w.remotes.Head(cp, "dev"), "pinned already: no commit")
	require.Equal(t, []string{"Statuses"}, w.gh.Methods(), "its status is there: nothing to write")
	require.Len(t, w.sched.pinned, 1)

	// The status could not be written when it was pinned: pinning again writes it.
	w.gh.CommitStatuses[cp] = nil
	w.gh.Reset()
	require.NoError(t, w.p.PromoteMain(context.Background(), w.loc("", m1)))
	require.Equal(t, []string{"Statuses", "CreateStatus"}, w.gh.Methods())
	state, _ = w.status("dev", m1)
	require.Equal(t, "pending", state)
}

func TestAPinSupersedesTheCommitOnItsWay(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageAuto)
	ctx := context.Background()
	m1 := w.main("a")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m1)))
	dep, err := w.gh.CreateDeployment(ctx, cp, &github.DeploymentRequest{Ref: &m1, Environment: github.String("dev")})
	require.NoError(t, err)
	done, err := w.gh.CreateDeployment(ctx, cp, &github.DeploymentRequest{Ref: &m1, Environment: github.String("dev")})
	require.NoError(t, err)
	require.NoError(t, w.gh.CreateDeploymentStatus(ctx, cp, done.GetID(), &github.DeploymentStatusRequest{State: github.String("failure")}))

	m2 := w.main("b")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m2)))
	state, desc := w.status("dev", m1)
	require.Equal(t, "error", state)
	require.Equal(t, "superseded by "+m2[:7], desc)
	require.Equal(t, "inactive", w.gh.DeploymentHistory[dep.GetID()][0].GetState())
	require.Len(t, w.gh.DeploymentHistory[done.GetID()], 1, "a finished deployment keeps its status")
	state, _ = w.status("dev", m2)
	require.Equal(t, "pending", state)
}

// racingGit moves a branch of the control plane just after the cache fetched it, the first
// times: someone else pushed in between.
type racingGit struct {
	*gitcache.Cache
	times int
	move  func()
}

func (g *racingGit) Use(ctx context.Context, r gitcache.Remote, branches []string, fn func(*gitcache.Session) error) error {
	return g.Cache.Use(ctx, r, branches, func(s *gitcache.Session) error {
		if len(branches) > 0 && r.Name == cp.Name && g.times > 0 {
			g.times--
			g.move()
		}
		return fn(s)
	})
}

func TestAPinRetriesALostRace(t *testing.T) {
	t.Parallel()
	for _, lost := range []int{1, 4} {
		w := newWorld(t, devAuto, stageAuto)
		m1 := w.main("a")
		moves := 0
		w.start(&racingGit{Cache: w.cache, times: lost, move: func() {
			moves++
			w.remotes.Commit(cp, "dev", map[string]*string{"other.txt": gitfake.Str(fmt.Sprint(moves))}, "Someone else")
		}})
		err := w.p.PromoteMain(context.Background(), w.loc("", m1))
		require.Equal(t, lost, moves)
		if lost == maxPinAttempts {
			require.ErrorIs(t, err, gitcache.ErrStale)
			require.Equal(t, w.seed, w.pin("dev"))
			continue
		}
		require.NoError(t, err)
		require.Equal(t, m1, w.pin("dev"))
		require.Equal(t, "1", w.remotes.File(cp, "dev", "other.txt"), "their change is kept")
	}
}

// Two pushes to main handled out of order (a slow replica validated the older one): the
// older commit is not pinned over the newer one and nothing is marked superseded by it.
func TestAPinNeverMovesBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageAuto)
	ctx := context.Background()
	m1 := w.main("a")
	m2 := w.main("b")
	s := w.stage("dev")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m2)))
	require.ErrorIs(t, w.p.Pin(ctx, w.loc("dev", m1), s, "test"), ErrBehind)
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m1)), "an event for an older commit changes nothing, and is no error")
	require.Equal(t, m2, w.pin("dev"))
	state, desc := w.status("dev", m2)
	require.Equal(t, "pending", state)
	require.Equal(t, descAwaitMerge, desc)
	state, _ = w.status("dev", m1)
	require.Empty(t, state, "the older commit is not marked")
	require.Equal(t, []string{"dev:dev"}, w.sched.pinned)
}

func TestPinFailures(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devAuto, stageAuto)
	ctx := context.Background()
	s := w.stage("dev")
	w.remotes.SetHead(cp, "dev", "")
	require.ErrorContains(t, w.p.Pin(ctx, w.loc("dev", w.seed), s, "x"), `has no branch "dev"`)
	w.remotes.Commit(cp, "dev", map[string]*string{"readme.md": gitfake.Str("x")}, "No pin")
	require.ErrorContains(t, w.p.Pin(ctx, w.loc("dev", w.seed), s, "x"), "no BaseRepo named main")
}

func TestPinText(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	cases := map[string]struct{ in, want string }{
		"replaces the commit": {
			"kind: BaseRepo\nmetadata:\n  name: main\nspec:\n  repo: r\n  branch: main\n  path: .\n  commit: 5523a85f37d12c0c7c10ab6616644db089fcd6f7\n",
			"kind: BaseRepo\nmetadata:\n  name: main\nspec:\n  repo: r\n  branch: main\n  path: .\n  commit: " + sha + "\n"},
		"adds it after path, with the same indent": {
			"spec:\n    repo: r\n    branch: main\n    path: .\n# end\n",
			"spec:\n    repo: r\n    branch: main\n    path: .\n    commit: " + sha + "\n# end\n"},
		"keeps what follows": {
			"spec:\n  commit: abc # pinned\n  path: .\n",
			"spec:\n  commit: " + sha + "\n  path: .\n"},
		"no place for it": {"spec:\n  repo: r\n", "spec:\n  repo: r\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { require.Equal(t, tc.want, pinText(tc.in, sha)) })
	}
}

func TestApprovalID(t *testing.T) {
	l := Locator{Installation: 1, ControlPlane: envref.Repo{Owner: "o", Name: "cp"}, Env: "stage", Commit: "abc"}
	got, ok := parseApprovalID(approvalID(l))
	require.True(t, ok)
	l.Installation = 0 // not in the identifier: the event says it
	require.Equal(t, l, got)
	for _, bad := range []string{"kalypso:o/cp:dev", "kalypso-promote:ocp:dev:abc"} {
		_, ok = parseApprovalID(bad)
		require.False(t, ok, bad)
	}
}
