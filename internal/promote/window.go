package promote

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/ellipsis"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/window"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// OverrideAction is the identifier of the check-run button with which a user with admin
// permission promotes despite a closed promotion window.
const OverrideAction = "window-override"

// Held promotions: the main commit's status while a window holds its automatic promotion, and
// the title of its "Promote to <env>" check run.
const (
	heldPrefix = "held: "
	heldTitle  = "Held by a promotion window"
)

// overrideTrailer marks a pin pushed by an override of a closed window: the environment's
// GitOps pull request then carries a successful kalypso/window status while the window is closed.
const overrideTrailer = "Kalypso-Window-Override: "

// WithWindowRecheck makes a promotion held by a closed window look again at least this often
// (default 0: when the window opens). Only a clock that jumps needs it: a test clock.
func WithWindowRecheck(d time.Duration) Option { return func(p *Promoter) { p.recheck = d } }

// verdict is what the stage's windows say now.
func (p *Promoter) verdict(s *scheduling.Stage) window.Verdict {
	return window.Decide(s.Windows, p.now())
}

// again is how long until a promotion held by v looks again.
func (p *Promoter) again(v window.Verdict) time.Duration {
	d := time.Duration(0)
	if !v.Until.IsZero() {
		d = max(v.Until.Sub(p.now()), time.Second)
	}
	if p.recheck > 0 && (d == 0 || p.recheck < d) {
		d = p.recheck
	}
	if d == 0 {
		d = window.Horizon
	}
	return d
}

// isHeld reports whether a main commit's status says a window holds its promotion.
func isHeld(st *github.RepoStatus) bool {
	return st.GetState() == "pending" && strings.HasPrefix(st.GetDescription(), heldPrefix)
}

// hold records that a closed window holds the automatic promotion of l: the main commit's
// status says so and its "Promote to <env>" check run offers an admin the override. It
// returns how long until the promotion looks again.
func (p *Promoter) hold(ctx context.Context, l Locator, s *scheduling.Stage, v window.Verdict) (time.Duration, error) {
	desc := heldPrefix + v.Short()
	if st, err := p.currentStatus(ctx, l); err != nil {
		return 0, err
	} else if st != nil && !isHeld(st) {
		return 0, nil // pinned meanwhile (an override): no longer held
	} else if st.GetDescription() != desc {
		if err := p.status(ctx, l, "pending", desc); err != nil {
			return 0, err
		}
		logger(ctx).Info().Str("environment", l.Env).Str("main", l.Commit).Str("window", v.String()).Msg("promotion held by a window")
		p.record(ctx, audit.KindWindowHold, l, "", v.String())
	}
	return p.again(v), p.heldRun(ctx, l, s, v)
}

// heldRun creates or updates the "Promote to <env>" check run of a held promotion: it names
// the window that holds it and when it opens, and offers the override (and, for a manual
// stage, the Promote button that says when the window opens).
func (p *Promoter) heldRun(ctx context.Context, l Locator, s *scheduling.Stage, v window.Verdict) error {
	gh, err := p.clients.Client(ctx, l.Installation)
	if err != nil {
		return err
	}
	summary := fmt.Sprintf("The promotion of main %s to **%s** waits: %s.\n\nA user with admin permission on %s can promote it now with **Override window**; the override is recorded.",
		short(l.Commit), l.Env, v.String(), l.ControlPlane)
	if s.Manual {
		summary += " The Promote button promotes once the window opens."
	}
	return p.upsertApproval(ctx, gh, l, heldTitle, summary, heldButtons(v, s.Manual))
}

// heldButtons are the buttons of a held promotion's check run.
func heldButtons(v window.Verdict, manual bool) []*github.CheckRunAction {
	override := &github.CheckRunAction{Label: "Override window", Description: "Admins: promote despite the window", Identifier: OverrideAction}
	if !manual {
		return []*github.CheckRunAction{override}
	}
	promote := promoteButton("Window " + v.Opens())
	return append(promote, override)
}

// upsertApproval writes the "Promote to <env>" check run of l as action_required with the
// given text and buttons, creating it when the commit has none; an unchanged one is left alone.
// Within the process, one upsert of a check run runs at a time.
func (p *Promoter) upsertApproval(ctx context.Context, gh ghport.GitHub, l Locator, title, summary string, actions []*github.CheckRunAction) error {
	defer p.runs.lock(fmt.Sprint(l.Installation, "/", approvalID(l)))()
	existing, err := ghport.FindCheckRun(ctx, gh, l.ControlPlane, l.Commit, ApprovalCheckName(l.Env), approvalID(l))
	if err != nil {
		return err
	}
	if existing == nil {
		_, err = gh.CreateCheckRun(ctx, l.ControlPlane, github.CreateCheckRunOptions{
			Name: ApprovalCheckName(l.Env), HeadSHA: l.Commit, ExternalID: github.String(approvalID(l)),
			Status: github.String("completed"), Conclusion: github.String("action_required"),
			Output:  &github.CheckRunOutput{Title: github.String(title), Summary: github.String(ellipsis.Cut(summary, 60000))},
			Actions: actions,
		})
		if err != nil {
			return fmt.Errorf("check run %s on %s: %w", ApprovalCheckName(l.Env), short(l.Commit), err)
		}
		return nil
	}
	if !approvalsLine.MatchString(summary) {
		summary = withApprovals(summary, approvalsOf(existing)) // approvals counted so far stay
	}
	if !offersPromotion(existing) || (existing.GetOutput().GetTitle() == title && existing.GetOutput().GetSummary() == summary) {
		return nil
	}
	return p.writeApproval(ctx, gh, l, existing, "action_required", title, summary, actions)
}

// releaseHeld completes the check run of a held automatic promotion once it is pinned (only a
// stage with windows holds one).
func (p *Promoter) releaseHeld(ctx context.Context, l Locator, s *scheduling.Stage, v window.Verdict) error {
	if len(s.Windows) == 0 {
		return nil
	}
	return p.endApproval(ctx, l, "success", "Promoted when the window opened",
		fmt.Sprintf("Main %s was promoted to %s automatically: %s.", short(l.Commit), l.Env, v.String()))
}

// endApproval completes the "Promote to <env>" check run of l, if it still offers a
// promotion, with conclusion, title and summary, and without buttons.
func (p *Promoter) endApproval(ctx context.Context, l Locator, conclusion, title, summary string) error {
	gh, err := p.clients.Client(ctx, l.Installation)
	if err != nil {
		return err
	}
	run, err := ghport.FindCheckRun(ctx, gh, l.ControlPlane, l.Commit, ApprovalCheckName(l.Env), approvalID(l))
	if err != nil || run == nil || !offersPromotion(run) {
		return err
	}
	return p.writeApproval(ctx, gh, l, run, conclusion, title, summary, nil)
}

// windowWhy is the reason a pin records for the window that let it through.
func windowWhy(why string, v window.Verdict) string {
	if v.By == nil {
		return why
	}
	return why + "; window " + v.Short()
}
