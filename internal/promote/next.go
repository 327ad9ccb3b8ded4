package promote

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/reconcile"
)

// PromoteAction is the identifier of the check-run button that approves a promotion.
const PromoteAction = "promote"

// ApprovalCheckName is the name of the check run that asks to promote into env.
func ApprovalCheckName(env string) string { return "Promote to " + env }

// approvalID identifies an approval check run: control plane, environment and commit.
func approvalID(cp reconcile.Repo, env, sha string) string {
	return fmt.Sprintf("kalypso-promote:%s:%s:%s", cp, env, sha)
}

func parseApprovalID(id string) (cp reconcile.Repo, env, sha string, ok bool) {
	parts := strings.Split(id, ":")
	if len(parts) != 4 || parts[0] != "kalypso-promote" {
		return cp, "", "", false
	}
	owner, name, ok := strings.Cut(parts[1], "/")
	return reconcile.Repo{Owner: owner, Name: name}, parts[2], parts[3], ok
}

// finish records the end of a wait and, on success, promotes into the next environments.
func (p *Promoter) finish(ctx context.Context, d *deployment, success bool, desc string) error {
	state, depState := "failure", "failure"
	if success {
		state, depState = "success", "success"
	}
	if err := p.status(ctx, d.Inst, d.CP, d.Main, d.Stage.Env.Name, state, desc); err != nil {
		return err
	}
	if err := p.deploymentStatus(ctx, d, depState, desc); err != nil {
		return err
	}
	logger(p.base).Info().Str("environment", d.Stage.Env.Name).Str("main", d.Main).Bool("success", success).Str("result", desc).Msg("promotion wait ended")
	if !success {
		return nil
	}
	return p.next(ctx, d.Inst, d.CP, d.Stage.Env.Name, d.Main, 0)
}

// next promotes main into the environments after env: automatically after their soak time
// (less what has already passed), or by asking for approval with a check run.
func (p *Promoter) next(ctx context.Context, inst int64, cp reconcile.Repo, env, sha string, soaked time.Duration) error {
	chain, _, err := p.chain(ctx, inst, cp)
	if err != nil {
		return err
	}
	for _, s := range chain.Next(env) {
		if s.Manual {
			if err := p.askApproval(ctx, inst, cp, s, sha, env); err != nil {
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
		err := p.pinForward(ctx, inst, cp, s, sha, "automatic after "+env)
		if errors.Is(err, ErrBehind) {
			logger(ctx).Info().Str("environment", s.Env.Name).Str("main", sha).Err(err).Msg("not promoted: a newer commit is already pinned")
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}
