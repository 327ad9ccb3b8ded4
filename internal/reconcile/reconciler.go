// Package reconcile converges an environment's GitOps pull request to what its control plane
// says, and reports the outcome on GitHub as check runs.
package reconcile

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/preview"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Git is how the reconciler reads and writes repositories: through sessions of the git cache
// (implemented by *gitcache.Cache).
type Git interface {
	Use(ctx context.Context, r gitcache.Remote, branches []string, fn func(*gitcache.Session) error) error
	UseCached(r gitcache.Remote, fn func(*gitcache.Session) error) error
}

// Reconciler computes environments from git and converges their GitOps pull requests.
type Reconciler struct {
	cache   Git
	clients ghport.Installations
	now     func() time.Time
	reports sync.Map // repository and environment → *sync.Mutex: one check-run report at a time
	results *results // the last result of each environment, to render only what changed
	claims  Claims   // who may write which GitOps branch; nil allows every environment
	policy  scheduling.Policy
	bot     botUser // the App's bot user, whose comments are the app's own
}

// Claims decides whether an environment may write a branch of a GitOps repository.
type Claims interface {
	Claim(ctx context.Context, env envref.Env, gitops envref.Repo, base string) error
}

// UseClaims makes every write to a GitOps repository ask c first. Call it before the
// reconciler is used.
func (r *Reconciler) UseClaims(c Claims) { r.claims = c }

// New returns a reconciler over a git cache and installation clients.
func New(cache Git, clients ghport.Installations, opts ...Option) *Reconciler {
	r := &Reconciler{cache: cache, clients: clients, now: time.Now, results: newResults()}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Option configures a Reconciler.
type Option func(*Reconciler)

// WithPolicy bounds what is read from repositories and what workload repositories may say.
func WithPolicy(p scheduling.Policy) Option {
	return func(r *Reconciler) { r.policy = p }
}

// WithRenderLimits bounds the rendering of every environment (render.DefaultLimits without).
func WithRenderLimits(l render.Limits) Option {
	return func(r *Reconciler) { r.results.opts = []render.Option{render.WithLimits(l)} }
}

// Outcome is what reconciling an environment found and did.
type Outcome struct {
	Env      envref.Env
	Result   *render.Result
	Sources  []scheduling.SourceCommit
	GitOps   envref.Repo
	Base     string       // the GitOps environment branch
	Plan     *render.Plan // what the pull request changes in the GitOps branch
	PR       *github.PullRequest
	Promoted bool // the pull request changes the promoted commit
	Commit   string
	Render   render.Stats // how much was rendered again
	// Held lists the limits of the environment's guard that the proposed change exceeds: it
	// was not pushed, and waits for a click on Accept on the environment branch commit's check.
	Held []preview.Violation
	// Accepted is the acceptance recorded on that check run, when one let the change through.
	Accepted  string
	limits    *scheduling.Limits
	firstRead bool // the first reading of the inputs by this reconcile (see checkForward)
}

// maxRaces bounds how often one reconcile reads its inputs again after losing a race (its
// lease, newer sources already on the GitOps branch, a merge under way) before it fails and
// the work queue retries it later.
const maxRaces = 4

// Environment computes an environment and converges branch kalypso/<env> and its pull request.
// A lost race reads the state again (logged at info level); the error after maxRaces is one.
func (r *Reconciler) Environment(ctx context.Context, env envref.Env) (*Outcome, error) {
	token, err := r.clients.Token(ctx, env.Installation)
	if err != nil {
		return nil, fmt.Errorf("installation %d token: %w", env.Installation, err)
	}
	for attempt := 0; ; attempt++ {
		out, err := r.environmentOnce(ctx, env, token, attempt == 0)
		if !lostRace(err) || attempt+1 == maxRaces {
			return out, err
		}
		logRace(ctx, env, attempt, err)
	}
}

// environmentOnce reads the inputs, renders and converges once.
func (r *Reconciler) environmentOnce(ctx context.Context, env envref.Env, token string, first bool) (*Outcome, error) {
	out := &Outcome{Env: env, firstRead: first}
	ctx, ph := startPhases(ctx)
	defer ph.log(env.Name)
	snap, err := r.snapshot(ctx, env, token)
	if err != nil {
		r.results.drop(env)
		return nil, err
	}
	ph.done("load")
	out.Result, out.Render = r.results.render(env, snap)
	ph.done("render")
	if out.limits, err = r.guard(env); err != nil {
		return out, err
	}
	out.Sources = snap.Sources
	if !out.Result.HasTarget {
		return out, nil // nothing may be written; the errors say why
	}
	if out.GitOps, err = envref.RepoOf(snap.GitOpsRepo.Spec.Repo); err != nil {
		return out, fmt.Errorf("%s: %w", snap.GitOpsRepo.Ref(), err)
	}
	out.Base = snap.GitOpsRepo.Spec.Branch
	if r.claims != nil {
		if err := r.claims.Claim(ctx, env, out.GitOps, out.Base); err != nil {
			return out, err
		}
	}
	return out, r.converge(ctx, gitcache.Remote{Owner: out.GitOps.Owner, Name: out.GitOps.Name, Token: token}, out)
}

// Validate computes an environment with main at a given commit instead of its pin, writing nothing.
func (r *Reconciler) Validate(ctx context.Context, env envref.Env, main string) (*Outcome, error) {
	token, err := r.clients.Token(ctx, env.Installation)
	if err != nil {
		return nil, fmt.Errorf("installation %d token: %w", env.Installation, err)
	}
	snap, err := r.snapshotAt(ctx, env, token, plumbing.NewHash(main))
	if err != nil {
		return nil, err
	}
	return &Outcome{Env: env, Result: r.results.peek(env, snap), Sources: snap.Sources}, nil
}

// snapshot fetches the control plane and loads the environment.
func (r *Reconciler) snapshot(ctx context.Context, env envref.Env, token string) (*scheduling.Snapshot, error) {
	return r.snapshotAt(ctx, env, token, plumbing.ZeroHash)
}

func (r *Reconciler) snapshotAt(ctx context.Context, env envref.Env, token string, main plumbing.Hash) (*scheduling.Snapshot, error) {
	// The environment as pinned: its sources change a little at each push, so what was read and
	// parsed of them last time is kept (another main commit is read from scratch).
	caches := &loadCaches{}
	if main.IsZero() {
		caches = r.results.loadCaches(env)
		defer caches.trees.Sweep()
	}
	in, errs, err := r.inputs(ctx, env, token, main, caches.trees)
	if err != nil {
		return nil, err
	}
	in.Policy = r.policy
	in.Seniority = r.seniority(env.ControlPlane, in)
	in.Cache = caches.parses
	snap := scheduling.Load(in) // reads workload repositories, each under its own lock
	snap.Errors = append(errs, snap.Errors...).Sorted()
	return snap, nil
}

// inputs fetches the control plane and reads the environment's sources into memory, holding
// the control plane's lock only for that (never while other repositories are locked), through
// trees (nil: from scratch).
func (r *Reconciler) inputs(ctx context.Context, env envref.Env, token string, main plumbing.Hash, trees *gitsource.Cache) (scheduling.Inputs, scheduling.Errors, error) {
	var in scheduling.Inputs
	var errs scheduling.Errors
	remote := gitcache.Remote{Owner: env.ControlPlane.Owner, Name: env.ControlPlane.Name, Token: token}
	err := r.cache.Use(ctx, remote, nil, func(s *gitcache.Session) error {
		var err error
		ws := &cachedWorkloads{ctx: ctx, cache: r.cache, token: token, policy: r.policy, trees: trees}
		in, errs, err = gitsource.InputsWithMain(s.Repo, env.Name, ws, main, gitsource.Limits(r.policy), gitsource.WithCache(trees))
		return err
	})
	return in, errs, err
}
