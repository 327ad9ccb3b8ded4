package promote

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/kalypso-gitops/kalypso/internal/audit"
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

// finish records the end of a wait and, on success, makes the promotions into the next
// environments due.
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
	logger(ctx).Info().Str("environment", d.Env).Str("main", d.Commit).Bool("success", success).Str("result", cmp.Or(d.detail, desc)).Msg("promotion wait ended")
	p.record(ctx, audit.KindPromotion, d.Locator, "", state+": "+cmp.Or(d.detail, desc))
	if success {
		if err := p.deployedRun(ctx, d.Locator, desc); err != nil { // the Roll back button; its loss stops nothing
			logger(ctx).Warn().Err(err).Str("environment", d.Env).Msg("leaving the Roll back button of a deployment")
		}
	}
	if !success || p.sched == nil {
		return nil
	}
	chain, err := p.chain(ctx, d.Locator)
	if err != nil {
		return err
	}
	for _, s := range chain.Next(d.Env) {
		p.sched.Advance(ctx, envref.Env{Installation: d.Installation, ControlPlane: d.ControlPlane, Name: s.Env.Name})
	}
	return nil
}
