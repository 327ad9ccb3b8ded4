package promote

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/scheduling"
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
		if err := p.Pin(ctx, inst, cp, s, sha, "automatic after "+env); err != nil {
			return err
		}
	}
	return nil
}

// askApproval creates the "Promote to <env>" check run with a Promote button on the main commit.
func (p *Promoter) askApproval(ctx context.Context, inst int64, cp reconcile.Repo, s *scheduling.Stage, sha, from string) error {
	gh, err := p.clients.Client(ctx, inst)
	if err != nil {
		return err
	}
	env := s.Env.Name
	_, _, err = gh.Checks.CreateCheckRun(ctx, cp.Owner, cp.Name, github.CreateCheckRunOptions{
		Name: ApprovalCheckName(env), HeadSHA: sha, ExternalID: github.String(approvalID(cp, env, sha)),
		Status: github.String("completed"), Conclusion: github.String("action_required"),
		Output: &github.CheckRunOutput{
			Title:   github.String("Waiting for approval to promote to " + env),
			Summary: github.String(fmt.Sprintf("Main %s is deployed to %s. A user with write permission on %s can promote it to **%s** with the Promote button.", short(sha), from, cp, env)),
		},
		Actions: []*github.CheckRunAction{{Label: "Promote", Description: truncate("Promote to "+env, 40), Identifier: PromoteAction}},
	})
	if err != nil {
		return fmt.Errorf("ask approval to promote %s to %s: %w", short(sha), env, err)
	}
	return nil
}

// Approve handles a click on a Promote button: a user with write permission promotes, anyone
// else is told why not on the check run. Who approved is recorded in the pin's commit.
func (p *Promoter) Approve(ctx context.Context, inst int64, repo reconcile.Repo, run *github.CheckRun, user string) error {
	cp, env, sha, ok := parseApprovalID(run.GetExternalID())
	if !ok || cp != repo {
		return nil // not an approval of ours
	}
	gh, err := p.clients.Client(ctx, inst)
	if err != nil {
		return err
	}
	perm, _, err := gh.Repositories.GetPermissionLevel(ctx, cp.Owner, cp.Name, user)
	if err != nil {
		return fmt.Errorf("permission of %s on %s: %w", user, cp, err)
	}
	if level := perm.GetPermission(); level != "admin" && level != "write" && level != "maintain" {
		return p.updateApproval(ctx, inst, cp, run, "action_required", "Promotion refused",
			fmt.Sprintf("@%s cannot promote to %s: it needs write permission on %s (has %q).", user, env, cp, level))
	}
	chain, _, err := p.chain(ctx, inst, cp)
	if err != nil {
		return err
	}
	s := chain.Stages[env]
	if s == nil {
		return p.updateApproval(ctx, inst, cp, run, "neutral", "Nothing to promote", env+" no longer declares spec.promotion.")
	}
	if err := p.Pin(ctx, inst, cp, s, sha, "approved by @"+user); err != nil {
		return err
	}
	return p.updateApproval(ctx, inst, cp, run, "success", "Promoted by @"+user, fmt.Sprintf("@%s promoted main %s to %s.", user, short(sha), env))
}

func (p *Promoter) updateApproval(ctx context.Context, inst int64, cp reconcile.Repo, run *github.CheckRun, conclusion, title, summary string) error {
	gh, err := p.clients.Client(ctx, inst)
	if err != nil {
		return err
	}
	opts := github.UpdateCheckRunOptions{Name: run.GetName(), Status: github.String("completed"), Conclusion: &conclusion,
		Output: &github.CheckRunOutput{Title: &title, Summary: &summary}}
	if conclusion == "action_required" {
		opts.Actions = []*github.CheckRunAction{{Label: "Promote", Description: "Promote again", Identifier: PromoteAction}}
	}
	if _, _, err := gh.Checks.UpdateCheckRun(ctx, cp.Owner, cp.Name, run.GetID(), opts); err != nil {
		return fmt.Errorf("update check run %d: %w", run.GetID(), err)
	}
	return nil
}
