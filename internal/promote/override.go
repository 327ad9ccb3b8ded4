package promote

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/window"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// overrideReasonTrailer carries the reason of a window override in the pin's commit message.
const overrideReasonTrailer = "Kalypso-Window-Override-Reason: "

// noReason is what the audit trail says of an override from the button, which carries no text.
const noReason = "no reason given (button); use kalypso override --reason to give one"

// Errors of override requests.
var (
	// ErrNothingToOverride: no "Promote to <env>" check run on the commit offers a promotion.
	ErrNothingToOverride = errors.New("no promotion of that commit waits: its Promote check run offers no button")
	// ErrRefused: the override was decided against; the error says why.
	ErrRefused = errors.New("override refused")
)

// clickHow says how a promotion was asked for (a click on Promote, on Override window, or an
// override request with a reason) and, once decided, what came of it.
type clickHow struct {
	override bool
	reason   string // of an override request; "" from the button
	pinned   bool   // the commit was pinned
	refused  error  // why it was not, when a rule refused it
}

// why is the reason of an override as the audit trail records it.
func (h *clickHow) why() string {
	if h.reason == "" {
		return noReason
	}
	return "reason: " + h.reason
}

// summary is what the check run of a promotion adds about the override's reason.
func (h *clickHow) summary() string {
	if !h.override || h.reason == "" {
		return ""
	}
	return "; override reason: " + h.reason
}

// pinMessage is the "why" of the pin an override pushes: who overrode which window, and the
// trailers the kalypso/window status reads back.
func (h *clickHow) pinMessage(user string, v window.Verdict) string {
	if h.reason == "" {
		return fmt.Sprintf("window override by @%s (%s)\n%s@%s", user, v.Short(), overrideTrailer, user)
	}
	return fmt.Sprintf("window override by @%s (%s): %s\n%s@%s\n%s%s", user, v.Short(), h.reason, overrideTrailer, user, overrideReasonTrailer, h.reason)
}

// oneLine folds a reason onto one line of printable text, so that it stays one trailer.
func oneLine(s string) string {
	printable := strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, s)
	return strings.Join(strings.Fields(printable), " ")
}

// Overridden is what an override request did.
type Overridden struct {
	Environment string `json:"environment"`
	Commit      string `json:"commit"` // the main commit now pinned
	User        string `json:"user"`
	Reason      string `json:"reason"`
}

// OverrideWindow promotes commit (default: the newest one deployed upstream, main's head for a
// first environment) into env despite its windows, exactly as a click on Override window of
// the commit's "Promote to <env>" check run does, and records reason in the pin's commit
// message, the audit trail and the kalypso/window status. user must have admin permission on
// the control plane (the check is made again here, as for the button). A refusal wraps
// ErrRefused and says why.
func (p *Promoter) OverrideWindow(ctx context.Context, env envref.Env, commit, user, reason string) (Overridden, error) {
	ctx = withActor(ctx, user)
	reason = oneLine(reason)
	l := locate(env, commit)
	if commit == "" {
		var err error
		if l.Commit, err = p.offeredCommit(ctx, l); err != nil {
			return Overridden{}, err
		}
	}
	out := Overridden{Environment: env.Name, Commit: l.Commit, User: user, Reason: reason}
	gh, err := p.clients.Client(ctx, l.Installation)
	if err != nil {
		return out, err
	}
	run, err := ghport.FindCheckRun(ctx, gh, l.ControlPlane, l.Commit, ApprovalCheckName(l.Env), approvalID(l))
	if err != nil {
		return out, err
	}
	if run == nil || !offersPromotion(run) {
		return out, fmt.Errorf("%s into %s: %w", short(l.Commit), l.Env, ErrNothingToOverride)
	}
	how := &clickHow{override: true, reason: reason}
	if err := p.decideClick(ctx, gh, l, run, user, how); err != nil {
		return out, err
	}
	if !how.pinned {
		why := how.refused
		if why == nil {
			why = errors.New("not promoted")
		}
		return out, fmt.Errorf("%w: %w", ErrRefused, why)
	}
	return out, nil
}

// offeredCommit is the main commit a promotion into l's environment would pin: what its
// upstream environment pins, or main's head for a first environment.
func (p *Promoter) offeredCommit(ctx context.Context, l Locator) (string, error) {
	var commit string
	err := p.onMain(ctx, l, func(chain *scheduling.Chain, s *gitcache.Session) error {
		st := chain.Stages[l.Env]
		switch {
		case st == nil:
			return fmt.Errorf("%s: %w", l.Env, ErrNoPromotion)
		case st.After == "":
			commit = gitcache.Head(s.Repo, gitsource.MainBranch).String()
		case chain.Stages[st.After] != nil:
			commit = pinOf(s.Repo, chain.Stages[st.After])
		}
		return nil
	})
	if err == nil && commit == "" {
		err = fmt.Errorf("%s: %w", l.Env, ErrNothingToOverride)
	}
	return commit, err
}
