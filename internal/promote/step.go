package promote

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-git/go-git/v5/plumbing"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// LeaseKey names the lease a replica holds while it runs the promotion of env:
// wait/<installation>/<control plane>/<environment>.
func LeaseKey(env envref.Env) string {
	return fmt.Sprintf("wait/%d/%s/%s", env.Installation, env.ControlPlane, env.Name)
}

// leaseTTL is how long a promotion's lease lasts without renewal: a few polls, and at least
// a minute, so that another replica takes over soon after its holder disappears.
func (p *Promoter) leaseTTL() time.Duration { return max(3*p.poll, time.Minute) }

// view is what a control plane says of its promotions: the chain declared on main, what each
// stage pins, and for each stage whether its upstream's pin is already there (the same commit
// or an ancestor of its own).
type view struct {
	chain    *scheduling.Chain
	pins     map[string]string
	behind   map[string]bool
	override map[string]string // who overrode the windows for the head of a stage's branch
	main     string            // main's head
}

// view reads the chain and the pins of the control plane of info.
func (p *Promoter) view(ctx context.Context, info envref.EnvInfo) (*view, error) {
	v := &view{pins: map[string]string{}, behind: map[string]bool{}, override: map[string]string{}}
	err := p.onMain(ctx, locate(info.Env, ""), func(c *scheduling.Chain, s *gitcache.Session) error {
		v.chain = c
		v.main = gitcache.Head(s.Repo, gitsource.MainBranch).String()
		for name, st := range c.Stages {
			v.pins[name] = pinOf(s.Repo, st)
			v.override[name] = overriddenBy(s, st)
		}
		for name, st := range c.Stages {
			up, own := v.pins[st.After], v.pins[name]
			v.behind[name] = up == "" || up == own || isAncestor(s.Repo, up, own)
		}
		return nil
	})
	return v, err
}

// Converge moves the promotion into an environment on from where GitHub says it stands: once
// the GitOps pull request of the commit it pins is merged it starts the wait for the clusters,
// looks at them while it waits and records the result; and it promotes the newest commit
// deployed upstream into it, after the soak time or by asking for approval. It returns how
// long until it should look again (0: not before an event or the resync).
//
// A replica runs it only while it holds the environment's lease (LeaseKey); otherwise it
// looks again later, in case the holder went away.
func (p *Promoter) Converge(ctx context.Context, info envref.EnvInfo) (time.Duration, error) {
	v, err := p.view(ctx, info)
	if err != nil {
		return 0, err
	}
	s := v.chain.Stages[info.Env.Name]
	if s == nil { // no spec.promotion: the pin is edited by hand, as in the reference
		p.waits.set(info.Env, false)
		return 0, nil
	}
	key := LeaseKey(info.Env)
	held, err := p.leases.TryAcquire(ctx, key, p.holder, p.leaseTTL())
	if err != nil {
		return 0, fmt.Errorf("lease %s: %w", key, err)
	}
	if !held {
		logger(ctx).Debug().Str("lease", key).Msg("another replica runs this promotion; looking again later")
		return p.poll, nil
	}
	again, err := p.advance(ctx, info, v, s)
	if err == nil && len(s.Windows) > 0 {
		var d time.Duration
		if d, err = p.postWindowStatus(ctx, info, s, v.override[s.Env.Name]); d > 0 && (again == 0 || d < again) {
			again = d
		}
	}
	if err == nil && again == 0 {
		if rerr := p.leases.Release(ctx, key, p.holder); rerr != nil {
			logger(ctx).Warn().Err(rerr).Str("lease", key).Msg("releasing a promotion's lease")
		}
	}
	return again, err
}

// advance runs both halves of a promotion step: the commit the environment pins, and the
// commit waiting upstream.
func (p *Promoter) advance(ctx context.Context, info envref.EnvInfo, v *view, s *scheduling.Stage) (time.Duration, error) {
	var again time.Duration
	if pin := v.pins[s.Env.Name]; pin != "" {
		d, err := p.own(ctx, info, s, pin)
		if err != nil {
			return 0, err
		}
		again = d
	} else {
		p.waits.set(info.Env, false)
	}
	var d time.Duration
	var err error
	switch {
	case s.After == "" && (len(s.Windows) > 0 || p.holds != nil) && v.main != v.pins[s.Env.Name]: // only a window or a hold holds a commit of main
		d, err = p.heldMain(ctx, info, s, v.main)
	case !v.behind[s.Env.Name]:
		d, err = p.incoming(ctx, info, s, v.pins[s.After])
	}
	if err != nil {
		return 0, err
	}
	if d > 0 && (again == 0 || d < again) {
		again = d
	}
	return again, nil
}

// heldMain pins main's head into a first environment once the window that held it opens.
func (p *Promoter) heldMain(ctx context.Context, info envref.EnvInfo, s *scheduling.Stage, head string) (time.Duration, error) {
	if head == "" || head == plumbing.ZeroHash.String() {
		return 0, nil
	}
	l := locate(info.Env, head)
	st, err := p.currentStatus(ctx, l)
	if err != nil || !isHeld(st) {
		return 0, err
	}
	if held, err := p.heldAround(ctx, l, s); err != nil || held {
		return 0, err
	}
	v := p.verdict(s)
	if !v.Open {
		return p.hold(ctx, l, s, v)
	}
	if err := p.pinMain(ctx, l, s, v); err != nil {
		return 0, err
	}
	return 0, p.unshowHold(ctx, l) // a hold kept it out until now
}

// own moves on the promotion of the commit the environment pins: from waiting for its merge
// to waiting for the clusters, and from there to its result.
func (p *Promoter) own(ctx context.Context, info envref.EnvInfo, s *scheduling.Stage, pin string) (time.Duration, error) {
	l := locate(info.Env, pin)
	st, err := p.currentStatus(ctx, l)
	if err != nil || st.GetState() != "pending" || (st.GetDescription() != descAwaitMerge && !IsWaiting(st.GetDescription())) {
		p.waits.set(info.Env, false)
		return 0, err
	}
	d := &deployment{Locator: l, Stage: s, GitOps: info.GitOps, Branch: info.GitOpsBranch}
	if IsWaiting(st.GetDescription()) {
		if _, err := p.findDeployment(ctx, d); err != nil {
			return 0, err
		}
	}
	if d.Merge == "" {
		deployed, merge, err := p.promotedIn(ctx, info)
		if err != nil || deployed != pin {
			return 0, err // not merged yet: its merge makes the promotion due again
		}
		d.Merge = merge
	}
	if err := p.ensureDeployment(ctx, d); err != nil {
		return 0, err
	}
	over, err := p.look(ctx, d, st.GetDescription())
	if err != nil || over {
		return 0, err
	}
	return p.poll, nil
}

// incoming promotes the newest commit deployed upstream (candidate, what upstream pins) into
// the environment, once: automatically after upstream has been deployed for the soak time, or
// by a Promote button on a check run of the commit.
func (p *Promoter) incoming(ctx context.Context, info envref.EnvInfo, s *scheduling.Stage, candidate string) (time.Duration, error) {
	l := locate(info.Env, candidate)
	up, err := p.currentStatus(ctx, l.In(s.After))
	if err != nil || up.GetState() != "success" {
		return 0, err // not deployed upstream (yet): its end makes the promotion due again
	}
	if st, err := p.currentStatus(ctx, l); err != nil || (st != nil && !isHeld(st)) {
		return 0, err // promoted here before (whatever became of it): never twice
	}
	v := p.verdict(s)
	if s.Manual && !v.Open {
		return p.again(v), p.heldRun(ctx, l, s, v)
	}
	if s.Manual {
		return 0, p.askApproval(ctx, l, s)
	}
	if held, err := p.heldAround(ctx, l, s); err != nil || held {
		return 0, err // a release makes the promotion due again
	}
	if wait := s.SoakTime - p.now().Sub(up.GetUpdatedAt().Time); wait > 0 {
		return wait, nil
	}
	if !v.Open {
		return p.hold(ctx, l, s, v)
	}
	err = p.Pin(ctx, l, s, windowWhy("automatic after "+s.After, v))
	if errors.Is(err, ErrBehind) {
		logger(ctx).Info().Str("environment", s.Env.Name).Str("main", candidate).Err(err).Msg("not promoted: a newer commit is already pinned")
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return 0, p.releaseHeld(ctx, l, s, v)
}
