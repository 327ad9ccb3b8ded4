package promote

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/ellipsis"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// askApproval creates the "Promote to <env>" check run with a Promote button on the main
// commit, unless the commit already has it (whatever became of it since); one that a closed
// window held is rewritten now that the window is open.
func (p *Promoter) askApproval(ctx context.Context, l Locator, s *scheduling.Stage) error {
	gh, err := p.clients.Client(ctx, l.Installation)
	if err != nil {
		return err
	}
	existing, err := ghport.FindCheckRun(ctx, gh, l.ControlPlane, l.Commit, ApprovalCheckName(l.Env), approvalID(l))
	if err != nil || (existing != nil && existing.GetOutput().GetTitle() != heldTitle) {
		return err
	}
	return p.upsertApproval(ctx, gh, l, "Waiting for approval to promote to "+l.Env,
		fmt.Sprintf("Main %s is deployed to %s. A user with write permission on %s can promote it to **%s** with the Promote button.\n\n%s",
			short(l.Commit), s.After, l.ControlPlane, l.Env, quorumSummary(l, s, nil)),
		promoteButton("Promote to "+l.Env))
}

func promoteButton(desc string) []*github.CheckRunAction {
	return []*github.CheckRunAction{{Label: "Promote", Description: ellipsis.Cut(desc, 40), Identifier: PromoteAction}}
}

// Approve handles a click on a Promote button. It counts once, from a user with write
// permission, while the check run (as GitHub has it now, not as the event says) still offers
// it, for the newest commit deployed upstream, and only to move the pin forward. Who approved
// is recorded in the pin's commit; a refused click says why on the check run or in the log.
func (p *Promoter) Approve(ctx context.Context, inst int64, repo envref.Repo, event *github.CheckRun, user string) error {
	return p.clicked(ctx, inst, repo, event, user, &clickHow{})
}

// Override handles a click on Override window: as Approve, from a user with admin permission,
// and it promotes whatever the windows say; the pin records who overrode which window, and
// the environment's GitOps pull request carries a successful kalypso/window status for it.
// The button carries no reason; OverrideWindow takes one.
func (p *Promoter) Override(ctx context.Context, inst int64, repo envref.Repo, event *github.CheckRun, user string) error {
	return p.clicked(ctx, inst, repo, event, user, &clickHow{override: true})
}

// clicked handles a click on Promote or Override window.
func (p *Promoter) clicked(ctx context.Context, inst int64, repo envref.Repo, event *github.CheckRun, user string, how *clickHow) error {
	ctx = withActor(ctx, user)
	l, ok := parseApprovalID(event.GetExternalID())
	if !ok || l.ControlPlane != repo {
		return nil // not an approval of ours
	}
	l.Installation = inst
	gh, run, err := p.currentRun(ctx, inst, repo, event.GetID())
	if err != nil {
		return err
	}
	return p.decideClick(ctx, gh, l, run, user, how)
}

// decideClick promotes l on a click (or an override request) on its current check run run, when
// it counts.
func (p *Promoter) decideClick(ctx context.Context, gh ghport.GitHub, l Locator, run *github.CheckRun, user string, how *clickHow) error {
	if !offersPromotion(run) {
		return p.refuse(ctx, l, run, user, how, click{Env: l.Env, SHA: l.Commit}.refusal())
	}
	if allowed, err := p.mayPromote(ctx, gh, l, run, user, how); err != nil || !allowed {
		return err
	}
	var s *scheduling.Stage
	var c click
	err := p.onMain(ctx, l, func(chain *scheduling.Chain, cached *gitcache.Session) error {
		if s = chain.Stages[l.Env]; s != nil {
			c = pinFacts(chain, cached.Repo, s, l.Commit)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if s == nil {
		how.refused = ErrNoPromotion
		return p.updateApproval(ctx, l, run, "neutral", "Nothing to promote", l.Env+" no longer declares spec.promotion.")
	}
	return p.approveClick(ctx, l, s, c, run, user, how)
}

// approveClick completes the facts of a click with the upstream statuses and pins its commit
// if it counts.
func (p *Promoter) approveClick(ctx context.Context, l Locator, s *scheduling.Stage, c click, run *github.CheckRun, user string, how *clickHow) error {
	c, err := p.upstreamFacts(ctx, l, c)
	if err != nil {
		return err
	}
	if !how.override && !s.Manual {
		c.Offered = false // an automatic promotion's check run offers only the override
	}
	if why := c.refusal(); why != nil {
		return p.refuse(ctx, l, run, user, how, why)
	}
	v := p.verdict(s)
	if !how.override && !v.Open {
		logger(ctx).Warn().Int64("check_run", run.GetID()).Str("user", user).Str("reason", v.String()).Msg("promotion click refused")
		p.record(ctx, audit.KindRefusal, l, "", v.String())
		return p.heldRun(ctx, l, s, v)
	}
	approved := approvalsOf(run)
	if !how.override {
		var enough bool
		if approved, enough, err = p.countApproval(ctx, l, s, run, user, approved); err != nil || !enough {
			return err
		}
	}
	why, title := windowWhy(approvedBy(approved), v), "Promoted by @"+strings.Join(approved, ", @")
	if how.override {
		p.record(ctx, audit.KindOverride, l, c.Pinned, v.String()+"; "+how.why())
		why, title = how.pinMessage(user, v), "Promoted by @"+user+", overriding the window"
	}
	if err := p.Pin(ctx, l, s, why); errors.Is(err, ErrBehind) {
		return p.refuse(ctx, l, run, user, how, err)
	} else if err != nil {
		return err
	}
	how.pinned = true
	return p.updateApproval(ctx, l, run, "success", title,
		withApprovals(fmt.Sprintf("@%s promoted main %s to %s (%s%s).", user, short(l.Commit), l.Env, v.String(), how.summary()), approved))
}

// countApproval counts a Promote click towards the stage's quorum: a click that does not
// count (a repeated one, the author's own, a user who is not an approver) is refused on the
// check run, which keeps its button; one that leaves the quorum short is recorded there. It
// returns the approvals with the click's, and whether they are enough.
func (p *Promoter) countApproval(ctx context.Context, l Locator, s *scheduling.Stage, run *github.CheckRun, user string, approved []string) ([]string, bool, error) {
	gh, err := p.clients.Client(ctx, l.Installation)
	if err != nil {
		return nil, false, err
	}
	why, err := p.quorumRefusal(ctx, gh, l, s, user, approved)
	if err != nil {
		return nil, false, err
	}
	if why != "" {
		logger(ctx).Warn().Int64("check_run", run.GetID()).Str("user", user).Str("reason", why).Msg("promotion click refused")
		p.record(ctx, audit.KindRefusal, l, "", why)
		summary := quorumSummary(l, s, approved) + "\n\nThe click of @" + user + " does not count: " + why + "."
		return nil, false, p.writeApproval(ctx, gh, l, run, "action_required", approvalTitle(l, s, approved), withApprovals(summary, approved), promoteButton("Promote to "+l.Env))
	}
	approved = append(approved, user)
	p.record(ctx, audit.KindApproval, l, "", fmt.Sprintf("approval %d of %d", len(approved), s.Required))
	if len(approved) >= s.Required {
		return approved, true, nil
	}
	logger(ctx).Info().Int64("check_run", run.GetID()).Str("user", user).Int("approvals", len(approved)).Int("required", s.Required).Msg("promotion approval counted")
	return nil, false, p.writeApproval(ctx, gh, l, run, "action_required", approvalTitle(l, s, approved),
		withApprovals(quorumSummary(l, s, approved), approved), promoteButton("Promote to "+l.Env))
}

// approvalTitle is the title of an approval check run that waits for its quorum.
func approvalTitle(l Locator, s *scheduling.Stage, approved []string) string {
	if s.Required <= 1 && len(approved) == 0 {
		return "Waiting for approval to promote to " + l.Env
	}
	return fmt.Sprintf("%d of %d approvals to promote to %s", len(approved), s.Required, l.Env)
}

// mayPromote checks that user has write permission on the control plane; if not, the check
// run says so and keeps its button.
func (p *Promoter) mayPromote(ctx context.Context, gh ghport.GitHub, l Locator, run *github.CheckRun, user string, how *clickHow) (bool, error) {
	level, err := gh.Permission(ctx, l.ControlPlane, user)
	if err != nil {
		return false, fmt.Errorf("permission of %s on %s: %w", user, l.ControlPlane, err)
	}
	if how.override && level != "admin" {
		logger(ctx).Warn().Str("environment", l.Env).Str("user", user).Str("permission", level).Msg("window override refused: no admin permission")
		how.refused = fmt.Errorf("window override by @%s refused: needs admin permission (has %q)", user, level)
		p.record(ctx, audit.KindRefusal, l, "", how.refused.Error())
		return false, nil
	}
	if !ghport.CanWrite(level) {
		how.refused = fmt.Errorf("@%s needs write permission (has %q)", user, level)
		logger(ctx).Warn().Str("environment", l.Env).Str("user", user).Str("permission", level).Msg("promotion click refused: no write permission")
		p.record(ctx, audit.KindRefusal, l, "", fmt.Sprintf("@%s needs write permission (has %q)", user, level))
		return false, p.writeApproval(ctx, gh, l, run, "action_required", "Promotion refused",
			fmt.Sprintf("@%s cannot promote to %s: it needs write permission on %s (has %q).", user, l.Env, l.ControlPlane, level), promoteButton("Promote again"))
	}
	return true, nil
}

// pinFacts reads from the control plane what decides whether a click on sha for stage s
// counts: what s and its upstream environment pin now.
func pinFacts(chain *scheduling.Chain, repo *git.Repository, s *scheduling.Stage, sha string) click {
	c := click{Env: s.Env.Name, SHA: sha, Offered: true, Upstream: s.After}
	c.Pinned = pinOf(repo, s)
	c.Behind = isAncestor(repo, sha, c.Pinned)
	if up := chain.Stages[s.After]; up != nil {
		c.Newest = pinOf(repo, up) // until upstreamFacts checks it is deployed there
	}
	return c
}

// upstreamFacts reads the upstream status of the clicked commit and of what upstream pins.
func (p *Promoter) upstreamFacts(ctx context.Context, l Locator, c click) (click, error) {
	upstreamPin := c.Newest
	c.Newest = ""
	if c.Upstream == "" {
		return c, nil
	}
	st, err := p.currentStatus(ctx, l.In(c.Upstream))
	if err != nil {
		return c, err
	}
	c.UpstreamOK = st.GetState() == "success"
	if upstreamPin == "" || upstreamPin == c.SHA {
		c.Newest = upstreamPin
		return c, nil
	}
	if st, err = p.currentStatus(ctx, l.In(c.Upstream).At(upstreamPin)); err != nil {
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
func (p *Promoter) refuse(ctx context.Context, l Locator, run *github.CheckRun, user string, how *clickHow, why error) error {
	how.refused = why
	logger(ctx).Warn().Int64("check_run", run.GetID()).Str("user", user).Str("reason", why.Error()).Msg("promotion click refused")
	p.record(ctx, audit.KindRefusal, l, "", why.Error())
	if errors.Is(why, ErrNotOffered) {
		return nil
	}
	return p.updateApproval(ctx, l, run, "neutral", "Promotion refused", fmt.Sprintf("The click of @%s does not promote: %s.", user, why))
}

// updateApproval completes an approval check run with a final conclusion and no button.
func (p *Promoter) updateApproval(ctx context.Context, l Locator, run *github.CheckRun, conclusion, title, summary string) error {
	gh, err := p.clients.Client(ctx, l.Installation)
	if err != nil {
		return err
	}
	return p.writeApproval(ctx, gh, l, run, conclusion, title, summary, nil)
}

// writeApproval updates an approval check run; actions nil removes its buttons.
func (p *Promoter) writeApproval(ctx context.Context, gh ghport.GitHub, l Locator, run *github.CheckRun, conclusion, title, summary string, actions []*github.CheckRunAction) error {
	err := gh.CompleteCheckRun(ctx, l.ControlPlane, run.GetID(), ghport.Completion{
		Name: run.GetName(), Conclusion: conclusion, Title: title, Summary: summary, Actions: actions})
	if err != nil {
		return fmt.Errorf("update check run %d: %w", run.GetID(), err)
	}
	return nil
}

// currentRun reads a clicked check run as GitHub has it now (not as the event says).
func (p *Promoter) currentRun(ctx context.Context, inst int64, repo envref.Repo, id int64) (ghport.GitHub, *github.CheckRun, error) {
	gh, err := p.clients.Client(ctx, inst)
	if err != nil {
		return nil, nil, err
	}
	run, err := gh.CheckRun(ctx, repo, id)
	if err != nil {
		return nil, nil, fmt.Errorf("check run %d: %w", id, err)
	}
	return gh, run, nil
}
