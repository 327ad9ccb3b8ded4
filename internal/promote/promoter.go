// Package promote moves main's commits from environment to environment: it pins a commit into
// an environment's base-repo.yaml, waits for the clusters to report compliance on the merged
// GitOps commit, records the result on GitHub and promotes further, automatically or on approval.
package promote

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/coord"
	"github.com/kalypso-gitops/kalypso/internal/ellipsis"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/window"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// StatusContext is the commit status on a main commit that tells where it is in an environment.
func StatusContext(env string) string { return "kalypso/" + env }

// Status descriptions the app writes and reads back after a restart.
const (
	descAwaitMerge = "waiting for the GitOps pull request to be merged"
	descDeploying  = "clusters compliant"
)

// Git is how the promoter reads and writes repositories: through sessions of the git cache
// (implemented by *gitcache.Cache).
type Git interface {
	Use(ctx context.Context, r gitcache.Remote, branches []string, fn func(*gitcache.Session) error) error
}

// Promoter runs promotions. It keeps nothing but caches: each step reads where a promotion
// stands from GitHub (pins, commit statuses, Deployments) and moves it on, so that a restart,
// another replica or a lost event changes nothing in the end.
type Promoter struct {
	cache   Git
	clients ghport.Installations
	now     func() time.Time
	poll    time.Duration
	sched   Scheduler
	leases  coord.Leases
	holder  string
	waits   waitSet
	reports Reports // the hub's store; nil: commit statuses only
	recheck time.Duration
	windows windowStatuses
	teams   teamCache
	trail   audit.Appender // the audit trail; nil: decisions are only logged
	holds   Holds          // holds of environments; nil: none
	runs    keyLocks       // check runs being found and then created or updated
}

// Scheduler is told of work a promotion makes due. The app queues it.
type Scheduler interface {
	// Pinned: an environment's branch pins another main commit now (its GitOps pull request
	// must follow, and the commit get its check run there).
	Pinned(ctx context.Context, env envref.Env, branch string)
	// Advance: the promotion into an environment may move on (its upstream finished, or
	// reports of its clusters were stored while it waits for them).
	Advance(ctx context.Context, env envref.Env)
}

// Option configures a Promoter.
type Option func(*Promoter)

// WithPollInterval sets how often cluster statuses are polled (default 15s).
func WithPollInterval(d time.Duration) Option { return func(p *Promoter) { p.poll = d } }

// WithClock sets the clock the promoter reads (default time.Now).
func WithClock(now func() time.Time) Option { return func(p *Promoter) { p.now = now } }

// WithScheduler sets who is told of the work promotions make due (default: nobody).
func WithScheduler(s Scheduler) Option { return func(p *Promoter) { p.sched = s } }

// WithLeases makes a replica run the steps of a promotion only while it holds the lease
// wait/<installation>/<control plane>/<environment> as holder (default: in-process leases).
func WithLeases(l coord.Leases, holder string) Option {
	return func(p *Promoter) { p.leases, p.holder = l, holder }
}

// New returns a Promoter over the git cache and installation clients.
func New(cache Git, clients ghport.Installations, opts ...Option) *Promoter {
	p := &Promoter{cache: cache, clients: clients, now: time.Now, poll: 15 * time.Second,
		leases: coord.NewLocal(), holder: "local", waits: waitSet{m: map[envref.Env]bool{}},
		windows: windowStatuses{posted: map[string]string{}}, teams: teamCache{m: map[string]teamEntry{}}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// remote is the cached repository of an installation, with a token to read it.
func (p *Promoter) remote(ctx context.Context, inst int64, repo envref.Repo) (gitcache.Remote, error) {
	token, err := p.clients.Token(ctx, inst)
	return gitcache.Remote{Owner: repo.Owner, Name: repo.Name, Token: token}, err
}

// onMain fetches every branch of the control plane of l and calls fn with the promotion chain
// declared on main, under the repository's lock.
func (p *Promoter) onMain(ctx context.Context, l Locator, fn func(*scheduling.Chain, *gitcache.Session) error) error {
	remote, err := p.remote(ctx, l.Installation, l.ControlPlane)
	if err != nil {
		return err
	}
	return p.cache.Use(ctx, remote, nil, func(s *gitcache.Session) error {
		envs, err := gitsource.MainEnvironments(s.Repo)
		if err != nil {
			return err
		}
		if envs == nil {
			return fn(&scheduling.Chain{Stages: map[string]*scheduling.Stage{}}, s)
		}
		chain, _ := scheduling.PromotionChain(envs)
		return fn(chain, s)
	})
}

// chain reads the promotion chain declared on main of the control plane of l.
func (p *Promoter) chain(ctx context.Context, l Locator) (*scheduling.Chain, error) {
	var out *scheduling.Chain
	err := p.onMain(ctx, l, func(c *scheduling.Chain, _ *gitcache.Session) error { out = c; return nil })
	return out, err
}

// PromoteMain pins a validated main commit into every first environment of the chain
// (main.Env is not read), only forward: where the commit is not ahead of the pin, nothing
// changes and the log says so.
func (p *Promoter) PromoteMain(ctx context.Context, main Locator) error {
	chain, err := p.chain(ctx, main)
	if err != nil {
		return err
	}
	for _, s := range chain.First() {
		l := main.In(s.Env.Name)
		if h, held, err := p.holdAround(ctx, l, s); err != nil {
			return err
		} else if held {
			if err := p.markHeld(ctx, l, h); err != nil {
				return err
			}
			continue
		}
		v := p.verdict(s)
		if !v.Open {
			if _, err := p.hold(ctx, l, s, v); err != nil {
				return err
			}
			if p.sched != nil {
				p.sched.Advance(ctx, envref.Env{Installation: l.Installation, ControlPlane: l.ControlPlane, Name: l.Env})
			}
			continue
		}
		if err := p.pinMain(ctx, l, s, v); err != nil {
			return err
		}
	}
	return nil
}

// pinMain pins a validated main commit into a first environment, whose windows are open.
func (p *Promoter) pinMain(ctx context.Context, l Locator, s *scheduling.Stage, v window.Verdict) error {
	err := p.Pin(ctx, l, s, windowWhy("push to main", v))
	if errors.Is(err, ErrBehind) {
		logger(ctx).Info().Str("environment", s.Env.Name).Str("main", l.Commit).Err(err).
			Msg("main is not ahead of the pinned commit: nothing to promote")
		return nil
	}
	if err != nil {
		return err
	}
	return p.releaseHeld(ctx, l, s, v)
}

// status posts the main commit's status for an environment.
func (p *Promoter) status(ctx context.Context, l Locator, state, desc string) error {
	gh, err := p.clients.Client(ctx, l.Installation)
	if err != nil {
		return err
	}
	err = gh.CreateStatus(ctx, l.ControlPlane, l.Commit, &github.RepoStatus{
		State: &state, Context: github.String(StatusContext(l.Env)), Description: github.String(ellipsis.Cut(desc, 140))})
	if err != nil {
		return fmt.Errorf("status %s on %s@%s: %w", StatusContext(l.Env), l.ControlPlane, short(l.Commit), err)
	}
	return nil
}

// supersede ends an older commit's promotion into its environment, if it is still under way.
// Pins only move forward, so by is never an ancestor of old.
func (p *Promoter) supersede(ctx context.Context, old Locator, by string) {
	if st, err := p.currentStatus(ctx, old); err == nil && st.GetState() == "pending" {
		why := "superseded by " + short(by)
		_ = p.status(ctx, old, "error", why)
		if err := p.endDeployments(ctx, old, why); err != nil {
			logger(ctx).Warn().Err(err).Str("environment", old.Env).Str("main", old.Commit).Msg("ending a superseded deployment")
		}
	}
}

// currentStatus returns the latest status of the environment's context on a main commit, or nil.
func (p *Promoter) currentStatus(ctx context.Context, l Locator) (*github.RepoStatus, error) {
	gh, err := p.clients.Client(ctx, l.Installation)
	if err != nil {
		return nil, err
	}
	statuses, err := gh.Statuses(ctx, l.ControlPlane, l.Commit)
	if err != nil {
		return nil, fmt.Errorf("statuses of %s@%s: %w", l.ControlPlane, short(l.Commit), err)
	}
	for _, st := range statuses {
		if st.GetContext() == StatusContext(l.Env) {
			return st, nil
		}
	}
	return nil, nil
}

func short(sha string) string { return sha[:min(7, len(sha))] }

func logger(ctx context.Context) *zerolog.Logger { return zerolog.Ctx(ctx) }
