package promote

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// askApproval creates the "Promote to <env>" check run with a Promote button on the main
// commit, unless the commit already has it (whatever became of it since).
func (p *Promoter) askApproval(ctx context.Context, inst int64, cp reconcile.Repo, s *scheduling.Stage, sha, from string) error {
	gh, err := p.clients.Client(ctx, inst)
	if err != nil {
		return err
	}
	env := s.Env.Name
	existing, err := reconcile.FindCheckRun(ctx, gh, cp, sha, ApprovalCheckName(env), approvalID(cp, env, sha))
	if err != nil || existing != nil {
		return err
	}
	_, _, err = gh.Checks.CreateCheckRun(ctx, cp.Owner, cp.Name, github.CreateCheckRunOptions{
		Name: ApprovalCheckName(env), HeadSHA: sha, ExternalID: github.String(approvalID(cp, env, sha)),
		Status: github.String("completed"), Conclusion: github.String("action_required"),
		Output: &github.CheckRunOutput{
			Title:   github.String("Waiting for approval to promote to " + env),
			Summary: github.String(fmt.Sprintf("Main %s is deployed to %s. A user with write permission on %s can promote it to **%s** with the Promote button.", short(sha), from, cp, env)),
		},
		Actions: promoteButton("Promote to " + env),
	})
	if err != nil {
		return fmt.Errorf("ask approval to promote %s to %s: %w", short(sha), env, err)
	}
	return nil
}

func promoteButton(desc string) []*github.CheckRunAction {
	return []*github.CheckRunAction{{Label: "Promote", Description: truncate(desc, 40), Identifier: PromoteAction}}
}

// Approve handles a click on a Promote button. It counts once, from a user with write
// permission, while the check run (as GitHub has it now, not as the event says) still offers
// it, for the newest commit deployed upstream, and only to move the pin forward. Who approved
// is recorded in the pin's commit; a refused click says why on the check run or in the log.
func (p *Promoter) Approve(ctx context.Context, inst int64, repo reconcile.Repo, event *github.CheckRun, user string) error {
	cp, env, sha, ok := parseApprovalID(event.GetExternalID())
	if !ok || cp != repo {
		return nil // not an approval of ours
	}
	gh, err := p.clients.Client(ctx, inst)
	if err != nil {
		return err
	}
	run, _, err := gh.Checks.GetCheckRun(ctx, cp.Owner, cp.Name, event.GetID())
	if err != nil {
		return fmt.Errorf("check run %d: %w", event.GetID(), err)
	}
	if !offersPromotion(run) {
		return p.refuse(ctx, inst, cp, run, user, click{Env: env, SHA: sha}.refusal())
	}
	if allowed, err := p.mayPromote(ctx, gh, cp, run, user, env); err != nil || !allowed {
		return err
	}
	chain, repoGit, err := p.chain(ctx, inst, cp)
	if err != nil {
		return err
	}
	s := chain.Stages[env]
	if s == nil {
		return p.updateApproval(ctx, inst, cp, run, "neutral", "Nothing to promote", env+" no longer declares spec.promotion.")
	}
	c, err := p.clickFacts(ctx, inst, cp, chain, repoGit, s, sha)
	if err != nil {
		return err
	}
	if why := c.refusal(); why != nil {
		return p.refuse(ctx, inst, cp, run, user, why)
	}
	if err := p.pinForward(ctx, inst, cp, s, sha, "approved by @"+user); errors.Is(err, ErrBehind) {
		return p.refuse(ctx, inst, cp, run, user, err)
	} else if err != nil {
		return err
	}
	return p.updateApproval(ctx, inst, cp, run, "success", "Promoted by @"+user, fmt.Sprintf("@%s promoted main %s to %s.", user, short(sha), env))
}

// mayPromote checks that user has write permission on the control plane; if not, the check
// run says so and keeps its button.
func (p *Promoter) mayPromote(ctx context.Context, gh *github.Client, cp reconcile.Repo, run *github.CheckRun, user, env string) (bool, error) {
	perm, _, err := gh.Repositories.GetPermissionLevel(ctx, cp.Owner, cp.Name, user)
	if err != nil {
		return false, fmt.Errorf("permission of %s on %s: %w", user, cp, err)
	}
	if level := perm.GetPermission(); level != "admin" && level != "write" && level != "maintain" {
		logger(ctx).Warn().Str("environment", env).Str("user", user).Str("permission", level).Msg("promotion click refused: no write permission")
		return false, p.writeApproval(ctx, gh, cp, run, "action_required", "Promotion refused",
			fmt.Sprintf("@%s cannot promote to %s: it needs write permission on %s (has %q).", user, env, cp, level), promoteButton("Promote again"))
	}
	return true, nil
}

// clickFacts reads what decides whether a click on sha for stage s counts: what s and its
// upstream environment pin now, and the upstream status of those commits.
func (p *Promoter) clickFacts(ctx context.Context, inst int64, cp reconcile.Repo, chain *scheduling.Chain, repo *git.Repository, s *scheduling.Stage, sha string) (click, error) {
	c := click{Env: s.Env.Name, SHA: sha, Offered: true, Upstream: s.After}
	var upstreamPin string
	func() {
		unlock := p.cache.Lock(cp.Owner, cp.Name)
		defer unlock()
		c.Pinned = pinOf(repo, s)
		c.Behind = isAncestor(repo, sha, c.Pinned)
		if up := chain.Stages[s.After]; up != nil {
			upstreamPin = pinOf(repo, up)
		}
	}()
	if c.Upstream == "" {
		return c, nil
	}
	st, err := p.currentStatus(ctx, inst, cp, sha, c.Upstream)
	if err != nil {
		return c, err
	}
	c.UpstreamOK = st.GetState() == "success"
	if upstreamPin == "" || upstreamPin == sha {
		c.Newest = upstreamPin
		return c, nil
	}
	if st, err = p.currentStatus(ctx, inst, cp, upstreamPin, c.Upstream); err != nil {
		return c, err
	}
	if st.GetState() == "success" {
		c.Newest = upstreamPin
	}
	return c, nil
}

// pinOf reads the commit a stage's environment branch pins, "" when it cannot be read.
func pinOf(repo *git.Repository, s *scheduling.Stage) string {
	fsys, err := gitsource.TreeFS(repo, gitcache.Head(repo, s.Env.Spec.ControlPlane.Branch))
	if err != nil {
		return ""
	}
	return scheduling.PinnedCommit(scheduling.Source{FS: fsys})
}

// refuse says why a click does not count: in the log always, and on the check run when it
// still offers the button, which it then loses (the click is stale). A check run that no
// longer offers it keeps what it says (for example who promoted with it).
func (p *Promoter) refuse(ctx context.Context, inst int64, cp reconcile.Repo, run *github.CheckRun, user string, why error) error {
	logger(ctx).Warn().Int64("check_run", run.GetID()).Str("user", user).Str("reason", why.Error()).Msg("promotion click refused")
	if errors.Is(why, ErrNotOffered) {
		return nil
	}
	return p.updateApproval(ctx, inst, cp, run, "neutral", "Promotion refused", fmt.Sprintf("The click of @%s does not promote: %s.", user, why))
}

// updateApproval completes an approval check run with a final conclusion and no button.
func (p *Promoter) updateApproval(ctx context.Context, inst int64, cp reconcile.Repo, run *github.CheckRun, conclusion, title, summary string) error {
	gh, err := p.clients.Client(ctx, inst)
	if err != nil {
		return err
	}
	return p.writeApproval(ctx, gh, cp, run, conclusion, title, summary, nil)
}

// approvalUpdate is the body of a check-run update that always sends its actions: go-github
// omits an empty list, and only an empty list removes the buttons.
type approvalUpdate struct {
	Name       string                   `json:"name"`
	Status     string                   `json:"status"`
	Conclusion string                   `json:"conclusion"`
	Output     *github.CheckRunOutput   `json:"output"`
	Actions    []*github.CheckRunAction `json:"actions"`
}

// writeApproval updates an approval check run; actions nil removes its buttons.
func (p *Promoter) writeApproval(ctx context.Context, gh *github.Client, cp reconcile.Repo, run *github.CheckRun, conclusion, title, summary string, actions []*github.CheckRunAction) error {
	if actions == nil {
		actions = []*github.CheckRunAction{}
	}
	body := approvalUpdate{Name: run.GetName(), Status: "completed", Conclusion: conclusion,
		Output: &github.CheckRunOutput{Title: &title, Summary: &summary}, Actions: actions}
	req, err := gh.NewRequest("PATCH", fmt.Sprintf("repos/%s/%s/check-runs/%d", cp.Owner, cp.Name, run.GetID()), body)
	if err != nil {
		return fmt.Errorf("update check run %d: %w", run.GetID(), err)
	}
	if _, err := gh.Do(ctx, req, nil); err != nil {
		return fmt.Errorf("update check run %d: %w", run.GetID(), err)
	}
	return nil
}
