package promote

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghfake"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitfake"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

var (
	cp         = gitfake.SamplePlane
	gitopsRepo = gitfake.SampleGitOps
)

const cluster1, cluster2 = "kustomization/flux-system/c1", "kustomization/flux-system/c2"

func environmentDoc(name, promotion string) string {
	return fmt.Sprintf("apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata:\n  name: %s\nspec:\n"+
		"  controlPlane:\n    repo: https://github.com/microsoft/kalypso-control-plane\n    branch: %s\n    path: .\n  promotion:\n%s", name, name, promotion)
}

// world is the sample in bare repositories, a fake GitHub and a promoter over them.
type world struct {
	t       *testing.T
	remotes *gitfake.Remotes
	cache   *gitcache.Cache
	gh      *ghfake.GitHub
	p       *Promoter
	seed    string       // the main commit the environments pin at first
	clock   atomic.Int64 // unix seconds
	sched   *recorder
}

// recorder is the promoter's scheduler: it records what it was told, in order.
type recorder struct {
	mu     sync.Mutex
	pinned []string // environment:branch
	due    []string // environments whose promotion was made due
}

func (r *recorder) Pinned(_ context.Context, env envref.Env, branch string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pinned = append(r.pinned, env.Name+":"+branch)
}

func (r *recorder) Advance(_ context.Context, env envref.Env) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.due = append(r.due, env.Name)
}

// takeDue returns and forgets the environments made due.
func (r *recorder) takeDue() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.due
	r.due = nil
	return out
}

// newWorld seeds the sample and declares the promotion of dev and stage on main.
func newWorld(t *testing.T, dev, stage string) *world {
	t.Helper()
	w := &world{t: t, remotes: gitfake.New(t), gh: ghfake.New()}
	w.clock.Store(1_700_000_000)
	w.seed = w.remotes.SeedSample()
	w.cache = gitcache.New("", w.remotes.URL())
	w.start(w.cache)
	if dev != "" {
		w.remotes.Commit(cp, "main", map[string]*string{
			".environments/dev.yaml":   gitfake.Str(environmentDoc("dev", dev)),
			".environments/stage.yaml": gitfake.Str(environmentDoc("stage", stage)),
		}, "Declare the chain")
	}
	return w
}

// start makes the promoter anew over git (a restart), polling every millisecond unless opts
// say otherwise.
func (w *world) start(git Git, opts ...Option) {
	w.sched = &recorder{}
	opts = append([]Option{WithPollInterval(time.Millisecond), WithClock(func() time.Time { return time.Unix(w.clock.Load(), 0) }),
		WithScheduler(w.sched)}, opts...)
	w.p = New(git, ghfake.Installations{GitHub: w.gh}, opts...)
}

// settle runs the promotion steps of envs, and of the environments they make due, as the
// work queue would, until none asks to look again; polls run at once. It stops after
// maxSteps steps, which a wait that never ends reaches.
func (w *world) settle(envs ...string) {
	w.t.Helper()
	const maxSteps = 50
	for step := 0; len(envs) > 0 && step < maxSteps; step++ {
		var next []string
		for _, env := range envs {
			again, err := w.p.Converge(context.Background(), info(env))
			require.NoError(w.t, err)
			if again > 0 {
				next = append(next, env)
			}
		}
		envs = append(next, w.sched.takeDue()...)
	}
}

// advance moves the promoter's clock.
func (w *world) advance(d time.Duration) { w.clock.Add(int64(d / time.Second)) }

func info(env string) envref.EnvInfo {
	return envref.EnvInfo{Env: envref.Env{Installation: 1, ControlPlane: cp, Name: env}, Branch: env, GitOps: gitopsRepo, GitOpsBranch: env}
}

// main commits a change on main and returns it.
func (w *world) main(file string) string {
	return w.remotes.Commit(cp, "main", map[string]*string{file: gitfake.Str(file)}, "Change "+file)
}

func (w *world) loc(env, sha string) Locator {
	return Locator{Installation: 1, ControlPlane: cp, Env: env, Commit: sha}
}

// pin reads what an environment branch pins.
func (w *world) pin(env string) string {
	w.t.Helper()
	m := commitLine.FindString(w.remotes.File(cp, env, "base-repo.yaml"))
	require.NotEmpty(w.t, m)
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(m), "commit:"))
}

// status is the latest kalypso/<env> status of a main commit, "" when none.
func (w *world) status(env, sha string) (state, desc string) {
	for _, st := range w.gh.Latest(cp, sha) {
		if st.GetContext() == StatusContext(env) {
			return st.GetState(), st.GetDescription()
		}
	}
	return "", ""
}

// merge makes a GitOps commit on env's branch that records main as promoted, as a merged
// pull request would; it returns the commit.
func (w *world) merge(env, main string) string {
	return w.remotes.Commit(gitopsRepo, env, map[string]*string{".github/tracking/Promoted_Commit_Id": gitfake.Str(main)}, "Merge")
}

// stage reads the promotion stage of env from main.
func (w *world) stage(env string) *scheduling.Stage {
	w.t.Helper()
	chain, err := w.p.chain(context.Background(), w.loc(env, ""))
	require.NoError(w.t, err)
	require.NotNil(w.t, chain.Stages[env])
	return chain.Stages[env]
}

// eventually waits up to five seconds for ok.
func (w *world) eventually(ok func() bool) {
	w.t.Helper()
	require.Eventually(w.t, ok, 5*time.Second, time.Millisecond)
}
