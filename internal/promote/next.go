package promote

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// PromoteAction is the identifier of the check-run button that approves a promotion.
const PromoteAction = "promote"

// ApprovalCheckName is the name of the check run that asks to promote into env.
func ApprovalCheckName(env string) string { return "Promote to " + env }

// approvalID identifies an approval check run: control plane, environment and commit.
func approvalID(l Locator) string {
	return fmt.Sprintf("kalypso-promote:%s:%s:%s", l.ControlPlane, l.Env, l.Commit)
}

// parseApprovalID reads back an approval check run's promotion (without its installation).
func parseApprovalID(id string) (Locator, bool) {
	parts := strings.Split(id, ":")
	if len(parts) != 4 || parts[0] != "kalypso-promote" {
		return Locator{}, false
	}
	owner, name, ok := strings.Cut(parts[1], "/")
	return Locator{ControlPlane: envref.Repo{Owner: owner, Name: name}, Env: parts[2], Commit: parts[3]}, ok
}

// finish records the end of a wait and, on success, promotes into the next environments.
func (p *Promoter) finish(ctx context.Context, d *deployment, success bool, desc string) error {
	state := "failure"
	if success {
		state = "success"
	}
	if err := p.status(ctx, d.Locator, state, desc); err != nil {
		return err
	}
	if err := p.deploymentStatus(ctx, d, state, cmp.Or(d.detail, desc)); err != nil {
		return err
	}
	logger(p.base).Info().Str("environment", d.Env).Str("main", d.Commit).Bool("success", success).Str("result", cmp.Or(d.detail, desc)).Msg("promotion wait ended")
	if !success {
		return nil
	}
	return p.next(ctx, d.Locator, 0)
}

// next promotes the commit of l into the environments after l's: automatically after their
// soak time (less what has already passed), or by asking for approval with a check run.
func (p *Promoter) next(ctx context.Context, l Locator, soaked time.Duration) error {
	chain, err := p.chain(ctx, l)
	if err != nil {
		return err
	}
	for _, s := range chain.Next(l.Env) {
		if s.Manual {
			if err := p.askApproval(ctx, l.In(s.Env.Name), l.Env); err != nil {
				return err
			}
			continue
		}
		if wait := s.SoakTime - soaked; wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
		err := p.pinForward(ctx, l.In(s.Env.Name), s, "automatic after "+l.Env)
		if errors.Is(err, ErrBehind) {
			logger(ctx).Info().Str("environment", s.Env.Name).Str("main", l.Commit).Err(err).Msg("not promoted: a newer commit is already pinned")
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}
