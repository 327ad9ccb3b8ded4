package promote

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/internal/store"
)

// ErrNotConfigChange: the latest commit of the environment branch is not a config change (it
// is a pin, or the branch's first commit).
var ErrNotConfigChange = errors.New("the latest commit of the environment branch is not a config change")

// RollBackConfig reverts the latest config change of env's branch — a new commit on top of it
// with its parent's tree, pushed without force — so that it reaches the environment through
// the usual pull request and wait, and holds env as RollBack does. A pin commit is not a
// config change: roll back the deployment instead.
func (p *Promoter) RollBackConfig(ctx context.Context, env envref.Env, user, reason string) (Rollback, error) {
	ctx = withActor(ctx, user)
	if p.holds == nil {
		return Rollback{}, ErrNoHolds
	}
	l := locate(env, "")
	s, _, err := p.stageAndPin(ctx, l)
	if err != nil {
		return Rollback{}, err
	}
	branch := s.Env.Spec.ControlPlane.Branch
	remote, err := p.remote(ctx, env.Installation, env.ControlPlane)
	if err != nil {
		return Rollback{}, err
	}
	var rb Rollback
	err = p.cache.Use(ctx, remote, []string{branch}, func(cs *gitcache.Session) error {
		var err error
		rb, err = p.revertHead(cs, branch, user, reason)
		return err
	})
	if err != nil {
		return Rollback{}, fmt.Errorf("revert the latest change of %s: %w", branch, err)
	}
	hold := store.Hold{ControlPlane: env.ControlPlane.String(), Environment: env.Name, By: user, Commit: rb.To, Reason: "config rollback: " + reason}
	if _, err := p.holds.SetHold(ctx, hold); err != nil {
		return Rollback{}, err
	}
	p.record(ctx, audit.KindHold, l, "", hold.Reason)
	p.record(ctx, audit.KindRollback, l, "", fmt.Sprintf("config change %s of %s reverted by %s: %s", short(rb.From), branch, short(rb.To), reason))
	p.pinned(ctx, l, branch)
	return rb, nil
}

// revertHead commits the revert of the branch head and pushes it, leased on that head.
func (p *Promoter) revertHead(cs *gitcache.Session, branch, user, reason string) (Rollback, error) {
	head := cs.Head(branch)
	c, err := cs.Repo.CommitObject(head)
	if err != nil {
		return Rollback{}, fmt.Errorf("read %s: %w", branch, err)
	}
	if len(c.ParentHashes) == 0 || strings.Contains(c.Message, "\nKalypso-Promoted: ") {
		return Rollback{}, fmt.Errorf("%s (%s): %w", branch, short(head.String()), ErrNotConfigChange)
	}
	parent, err := cs.Repo.CommitObject(c.ParentHashes[0])
	if err != nil {
		return Rollback{}, fmt.Errorf("read the parent of %s: %w", short(head.String()), err)
	}
	title, _, _ := strings.Cut(c.Message, "\n")
	msg := fmt.Sprintf("Revert %q\n\nThis reverts commit %s.\n\nKalypso-Reason: rollback by @%s: %s\n", title, head, user, reason)
	revert, err := gitops.Commit(cs.Repo, parent.TreeHash, head, msg, p.now())
	if err != nil {
		return Rollback{}, err
	}
	if err := cs.Push(branch, revert, head); err != nil {
		return Rollback{}, err
	}
	return Rollback{From: head.String(), To: revert.String()}, nil
}
