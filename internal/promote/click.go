package promote

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-github/v62/github"
)

// Why a Promote click does not count. Each is wrapped with the commits it is about.
var (
	// ErrNotOffered: the check run no longer shows the Promote button (it was used, refused
	// or replaced), so the click is a replay of an old one.
	ErrNotOffered = errors.New("this check run no longer offers a promotion")
	// ErrAlreadyPinned: the environment already pins the commit.
	ErrAlreadyPinned = errors.New("the environment already pins this commit")
	// ErrBehind: the commit is an ancestor of what the environment pins; a pin never moves back.
	ErrBehind = errors.New("the commit is older than the one the environment pins")
	// ErrNotCandidate: the commit is not deployed successfully to the upstream environment.
	ErrNotCandidate = errors.New("the commit is not deployed to the upstream environment")
	// ErrNewerCandidate: a newer commit is deployed to the upstream environment.
	ErrNewerCandidate = errors.New("a newer commit is the candidate for this environment")
)

// click is what is known about a Promote click when it is handled, read from GitHub then.
type click struct {
	Env, SHA   string
	Offered    bool   // the check run still shows the button
	Pinned     string // the commit Env pins now ("" when none)
	Behind     bool   // SHA is an ancestor of Pinned
	Upstream   string // the environment Env is promoted from ("" when none)
	UpstreamOK bool   // kalypso/<Upstream> is success on SHA
	Newest     string // what Upstream pins, when it is deployed there; "" when not (yet)
}

// refusal tells why the click must not promote, or nil when it counts: only a click on a
// button still offered, for the newest commit deployed upstream, that moves the pin forward.
func (c click) refusal() error {
	switch {
	case !c.Offered:
		return fmt.Errorf("main %s to %s: %w", short(c.SHA), c.Env, ErrNotOffered)
	case c.SHA == c.Pinned:
		return fmt.Errorf("%s pins main %s: %w", c.Env, short(c.SHA), ErrAlreadyPinned)
	case c.Behind:
		return fmt.Errorf("main %s is an ancestor of %s, which %s pins: %w", short(c.SHA), short(c.Pinned), c.Env, ErrBehind)
	case c.Upstream != "" && !c.UpstreamOK:
		return fmt.Errorf("main %s, %s: %w", short(c.SHA), c.Upstream, ErrNotCandidate)
	case c.Newest != "" && c.Newest != c.SHA:
		return fmt.Errorf("main %s is deployed to %s since main %s: %w", short(c.Newest), c.Upstream, short(c.SHA), ErrNewerCandidate)
	}
	return nil
}

// offersPromotion reports whether a check run, as GitHub has it now, shows the Promote button.
// GitHub's check-run resource does not list its actions; the app shows the button exactly
// while the run is completed as action_required, and removes it with any other conclusion.
func offersPromotion(run *github.CheckRun) bool {
	return run.GetStatus() == "completed" && run.GetConclusion() == "action_required"
}

// isAncestor reports whether commit a is a strict ancestor of commit b; false when either is
// unknown in repo.
func isAncestor(repo *git.Repository, a, b string) bool {
	if a == "" || b == "" || a == b {
		return false
	}
	ca, err := repo.CommitObject(plumbing.NewHash(a))
	if err != nil {
		return false
	}
	cb, err := repo.CommitObject(plumbing.NewHash(b))
	if err != nil {
		return false
	}
	ok, err := ca.IsAncestor(cb)
	return err == nil && ok
}
