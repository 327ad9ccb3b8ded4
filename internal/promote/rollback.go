package promote

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/store"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Holds keeps the holds of environments, shared by replicas (implemented by *store.Store).
type Holds interface {
	SetHold(ctx context.Context, h store.Hold) (bool, error)
	ReleaseHold(ctx context.Context, cp, env string) (store.Hold, bool, error)
	HoldOf(ctx context.Context, cp, env string) (store.Hold, bool, error)
}

// WithHolds keeps holds in h (default: none, and Rollback fails).
func WithHolds(h Holds) Option { return func(p *Promoter) { p.holds = h } }

// Errors of rollbacks and releases.
var (
	// ErrNoHolds: the promoter keeps no holds.
	ErrNoHolds = errors.New("holds need the hub's store")
	// ErrNoPromotion: the environment declares no spec.promotion.
	ErrNoPromotion = errors.New("the environment has no spec.promotion")
	// ErrNothingToRollBack: no earlier commit was deployed successfully to the environment.
	ErrNothingToRollBack = errors.New("no earlier commit was deployed successfully")
	// ErrNotHeld: a release of an environment that is not held.
	ErrNotHeld = errors.New("the environment is not held")
)

// Rollback is what a rollback did: the pin it moved back from and to.
type Rollback struct {
	From, To string
}

// isHeld reports whether env of l's control plane is held (never without holds).

// RollBack pins the previous successfully deployed main commit into env — the one exception to
// pins moving forward — through the usual pull request and compliance wait, and holds env:
// no automatic promotion into or out of it until Release. user has been checked for write
// permission on the control plane.
func (p *Promoter) RollBack(ctx context.Context, env envref.Env, user, reason string) (Rollback, error) {
	ctx = withActor(ctx, user)
	if p.holds == nil {
		return Rollback{}, ErrNoHolds
	}
	l := locate(env, "")
	s, pinned, err := p.stageAndPin(ctx, l)
	if err != nil {
		return Rollback{}, err
	}
	to, err := p.previousDeployed(ctx, l, pinned)
	if err != nil {
		return Rollback{}, err
	}
	hold := store.Hold{ControlPlane: l.ControlPlane.String(), Environment: env.Name, By: user, Commit: to, Reason: "rollback: " + reason}
	if _, err := p.holds.SetHold(ctx, hold); err != nil {
		return Rollback{}, err
	}
	p.record(ctx, audit.KindHold, l.At(to), pinned, hold.Reason)
	l = l.At(to)
	if err := p.pin(ctx, l, s, fmt.Sprintf("rollback by @%s from %s: %s", user, short(pinned), reason), true); err != nil {
		return Rollback{}, err
	}
	p.record(ctx, audit.KindRollback, l, pinned, reason)
	if err := p.holdRun(ctx, l, hold, ""); err != nil {
		logger(ctx).Warn().Err(err).Str("environment", env.Name).Msg("showing the hold on a check run")
	}
	return Rollback{From: pinned, To: to}, nil
}

// previousDeployed finds the newest main commit other than pinned whose Deployment to the
// environment ended in success, page after page among the newest promotion.maxDeployments.
func (p *Promoter) previousDeployed(ctx context.Context, l Locator, pinned string) (string, error) {
	gh, err := p.clients.Client(ctx, l.Installation)
	if err != nil {
		return "", err
	}
	var found string
	err = ghport.EachDeployment(ctx, gh, l.ControlPlane, github.DeploymentsListOptions{Environment: l.Env},
		func(d *github.Deployment) (bool, error) {
			if d.GetSHA() == pinned || d.GetSHA() == "" {
				return true, nil
			}
			st, err := gh.LatestDeploymentStatus(ctx, l.ControlPlane, d.GetID())
			if err != nil {
				return false, fmt.Errorf("deployment %d: %w", d.GetID(), err)
			}
			if st.GetState() == "success" {
				found = d.GetSHA()
				return false, nil
			}
			return true, nil
		})
	var limit *ghport.LimitError
	switch {
	case errors.As(err, &limit):
		return "", fmt.Errorf("%s: %w (among its newest %d Deployments, %s)", l.Env, ErrNothingToRollBack, limit.Limit, limit.Setting)
	case err != nil:
		return "", fmt.Errorf("deployments of %s: %w", l.Env, err)
	case found == "":
		return "", fmt.Errorf("%s: %w", l.Env, ErrNothingToRollBack)
	}
	return found, nil
}

// Release ends the hold of env: automatic promotion into and out of it resumes.
func (p *Promoter) Release(ctx context.Context, env envref.Env, user, reason string) (store.Hold, error) {
	ctx = withActor(ctx, user)
	if p.holds == nil {
		return store.Hold{}, ErrNoHolds
	}
	l := locate(env, "")
	h, released, err := p.holds.ReleaseHold(ctx, l.ControlPlane.String(), env.Name)
	if err != nil {
		return store.Hold{}, err
	}
	if !released {
		return store.Hold{}, fmt.Errorf("%s: %w", env.Name, ErrNotHeld)
	}
	p.record(ctx, audit.KindRelease, l, "", reason)
	if err := p.holdRun(ctx, l, h, fmt.Sprintf("Released by @%s: %s", user, reason)); err != nil {
		logger(ctx).Warn().Err(err).Str("environment", env.Name).Msg("showing the release on a check run")
	}
	if p.sched != nil {
		p.sched.Advance(ctx, env)
		if chain, err := p.chain(ctx, l); err == nil {
			for _, s := range chain.Next(env.Name) {
				p.sched.Advance(ctx, envref.Env{Installation: env.Installation, ControlPlane: env.ControlPlane, Name: s.Env.Name})
			}
		}
	}
	return h, nil
}

// heldAround reports whether a hold stops the automatic promotion into s: its environment or
// its upstream is held.
func (p *Promoter) heldAround(ctx context.Context, l Locator, s *scheduling.Stage) (bool, error) {
	_, held, err := p.holdAround(ctx, l, s)
	return held, err
}

// markHeld marks a main commit that hold h keeps out of a first environment, so that the
// release pins it (see heldMain), and shows the hold on the commit's check run of the
// environment.
func (p *Promoter) markHeld(ctx context.Context, l Locator, h store.Hold) error {
	if err := p.showHold(ctx, l, h, heldOutWhat(h, l.Env, l.Commit)); err != nil {
		logger(ctx).Warn().Err(err).Str("environment", l.Env).Str("main", l.Commit).Msg("showing the hold on a check run")
	}
	st, err := p.currentStatus(ctx, l)
	if err != nil || st != nil {
		return err
	}
	return p.status(ctx, l, "pending", heldPrefix+"the environment is held; a release promotes it")
}
