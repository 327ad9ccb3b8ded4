package promote

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/store"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// RollBackAction is the identifier of the Roll back button of a "Deployed to <env>" check run.
const RollBackAction = "rollback"

// DeployedCheckName is the name of the check run a successful promotion leaves on its main
// commit, with the Roll back button; HoldCheckName the one a rollback leaves on the commit it
// pins back, while the environment is held.
func DeployedCheckName(env string) string { return "Deployed to " + env }

// HoldCheckName names the check run that shows an environment's hold.
func HoldCheckName(env string) string { return "Hold on " + env }

func deployedTitle(env string) string { return "Deployed to " + env }

// runID identifies a check run of the app: kind, control plane, environment and commit.
func runID(kind string, l Locator) string {
	return fmt.Sprintf("kalypso-%s:%s:%s:%s", kind, l.ControlPlane, l.Env, l.Commit)
}

// parseRunID reads back a check run's promotion (without its installation).
func parseRunID(kind, id string) (Locator, bool) {
	parts := strings.Split(id, ":")
	if len(parts) != 4 || parts[0] != "kalypso-"+kind {
		return Locator{}, false
	}
	owner, name, ok := strings.Cut(parts[1], "/")
	return Locator{ControlPlane: envref.Repo{Owner: owner, Name: name}, Env: parts[2], Commit: parts[3]}, ok
}

// deployedRun leaves a "Deployed to <env>" check run with a Roll back button on a main commit
// deployed successfully (only when holds are kept: a rollback holds the environment).
func (p *Promoter) deployedRun(ctx context.Context, l Locator, desc string) error {
	if p.holds == nil {
		return nil
	}
	gh, err := p.clients.Client(ctx, l.Installation)
	if err != nil {
		return err
	}
	_, err = gh.CreateCheckRun(ctx, l.ControlPlane, github.CreateCheckRunOptions{
		Name: DeployedCheckName(l.Env), HeadSHA: l.Commit, ExternalID: github.String(runID("deployed", l)),
		Status: github.String("completed"), Conclusion: github.String("success"),
		Output: &github.CheckRunOutput{Title: github.String(deployedTitle(l.Env)), Summary: github.String(fmt.Sprintf(
			"Main %s is %s in **%s**. While it is the environment's latest deployment, a user with write permission on %s can "+
				"pin the previous successful deployment back with **Roll back**; %s is then held (no automatic promotion into or out of it) "+
				"until a release with a reason (`kalypso rollback --release`).", short(l.Commit), desc, l.Env, l.ControlPlane, l.Env))},
		Actions: rollBackButton(),
	})
	if err != nil {
		return fmt.Errorf("check run %s on %s: %w", DeployedCheckName(l.Env), short(l.Commit), err)
	}
	return nil
}

// rollBackButton is the Roll back button of a "Deployed to <env>" check run.
func rollBackButton() []*github.CheckRunAction {
	return []*github.CheckRunAction{{Label: "Roll back", Description: "Pin the previous deployment, hold", Identifier: RollBackAction}}
}

// RollBackClick handles a click on Roll back: from a user with write permission, while the
// check run (as GitHub has it now) still offers it and its commit is what the environment
// pins, it rolls the environment back (see RollBack). A refused click says why on the check
// run, which loses its button when it is stale.
func (p *Promoter) RollBackClick(ctx context.Context, inst int64, repo envref.Repo, event *github.CheckRun, user string) error {
	l, ok := parseRunID("deployed", event.GetExternalID())
	if !ok || l.ControlPlane != repo {
		return nil
	}
	l.Installation = inst
	ctx = withActor(ctx, user)
	gh, run, err := p.currentRun(ctx, inst, repo, event.GetID())
	if err != nil {
		return err
	}
	if run.GetOutput().GetTitle() != deployedTitle(l.Env) {
		p.record(ctx, audit.KindRefusal, l, "", "Roll back: this check run no longer offers it")
		return nil
	}
	level, err := gh.Permission(ctx, repo, user)
	if err != nil {
		return fmt.Errorf("permission of %s on %s: %w", user, repo, err)
	}
	if !ghport.CanWrite(level) {
		why := fmt.Sprintf("@%s cannot roll back %s: it needs write permission on %s (has %q)", user, l.Env, repo, level)
		p.record(ctx, audit.KindRefusal, l, "", why)
		return p.writeApproval(ctx, gh, l, run, "success", deployedTitle(l.Env), run.GetOutput().GetSummary()+"\n\n"+why+".", rollBackButton())
	}
	_, pinned, err := p.stageAndPin(ctx, l)
	if err != nil {
		return err
	}
	if pinned != l.Commit {
		why := fmt.Sprintf("%s pins main %s now, not %s: only its latest deployment is rolled back", l.Env, short(pinned), short(l.Commit))
		p.record(ctx, audit.KindRefusal, l, "", why)
		return p.writeApproval(ctx, gh, l, run, "success", "No longer the latest deployment", why+".", nil)
	}
	rb, err := p.RollBack(ctx, envref.Env{Installation: inst, ControlPlane: repo, Name: l.Env}, user,
		fmt.Sprintf("Roll back clicked on the check run of main %s", short(l.Commit)))
	if errors.Is(err, ErrNothingToRollBack) || errors.Is(err, ErrNoPromotion) {
		p.record(ctx, audit.KindRefusal, l, "", err.Error())
		return p.writeApproval(ctx, gh, l, run, "success", deployedTitle(l.Env), run.GetOutput().GetSummary()+"\n\nNot rolled back: "+err.Error()+".", rollBackButton())
	}
	if err != nil {
		return err
	}
	return p.writeApproval(ctx, gh, l, run, "success", "Rolled back by @"+user,
		fmt.Sprintf("@%s rolled %s back from main %s to %s; %s is held until a release.", user, l.Env, short(rb.From), short(rb.To), l.Env), nil)
}

// stageAndPin reads the stage of l's environment and the commit it pins now; an environment
// without spec.promotion is ErrNoPromotion.
func (p *Promoter) stageAndPin(ctx context.Context, l Locator) (*scheduling.Stage, string, error) {
	var s *scheduling.Stage
	var pinned string
	err := p.onMain(ctx, l, func(c *scheduling.Chain, cached *gitcache.Session) error {
		if s = c.Stages[l.Env]; s != nil {
			pinned = pinOf(cached.Repo, s)
		}
		return nil
	})
	if err == nil && s == nil {
		err = fmt.Errorf("%s: %w", l.Env, ErrNoPromotion)
	}
	return s, pinned, err
}

// holdRun shows a hold on the commit the rollback pinned back, or its release.
func (p *Promoter) holdRun(ctx context.Context, l Locator, h store.Hold, released string) error {
	gh, err := p.clients.Client(ctx, l.Installation)
	if err != nil {
		return err
	}
	l = l.At(h.Commit)
	title := fmt.Sprintf("%s is held by @%s", l.Env, h.By)
	summary := fmt.Sprintf("No automatic promotion goes into or out of **%s** until a user with write permission releases it with a reason "+
		"(`kalypso rollback --release --reason …`, or `POST /api/v1/release`).\n\nHeld by @%s: %s", l.Env, h.By, h.Reason)
	if released != "" {
		if err := p.unshowHold(ctx, l); err != nil {
			return err
		}
		existing, err := ghport.FindCheckRun(ctx, gh, l.ControlPlane, l.Commit, HoldCheckName(l.Env), runID("hold", l))
		if err != nil || existing == nil {
			return err
		}
		return p.writeApproval(ctx, gh, l, existing, "success", "Released", summary+"\n\n"+released, nil)
	}
	if err := p.showHold(ctx, l, h, heldAtWhat(l.Env, l.Commit)); err != nil {
		return err
	}
	_, err = gh.CreateCheckRun(ctx, l.ControlPlane, github.CreateCheckRunOptions{
		Name: HoldCheckName(l.Env), HeadSHA: l.Commit, ExternalID: github.String(runID("hold", l)),
		Status: github.String("completed"), Conclusion: github.String("neutral"),
		Output: &github.CheckRunOutput{Title: github.String(title), Summary: github.String(summary)}})
	if err != nil {
		return fmt.Errorf("check run %s on %s: %w", HoldCheckName(l.Env), short(l.Commit), err)
	}
	return nil
}
