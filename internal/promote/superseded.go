package promote

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// MaxPassedOver bounds the main commits between an environment's old pin and its new one that
// a pin looks at for a held promotion to end: the newest ones along first parents.
const MaxPassedOver = 100

// passedOver lists the main commits a pin of commit passes over: its first-parent ancestors
// newer than old (the previous pin), newest first, at most MaxPassedOver (when old is not
// among them, main was rewritten: its MaxPassedOver first-parent ancestors). Without an old
// pin, none.
func passedOver(repo *git.Repository, commit, old string) []string {
	if old == "" {
		return nil
	}
	c, err := repo.CommitObject(plumbing.NewHash(commit))
	var out []string
	for err == nil && len(c.ParentHashes) > 0 && len(out) < MaxPassedOver {
		parent := c.ParentHashes[0]
		if parent.String() == old {
			break
		}
		out = append(out, parent.String())
		c, err = repo.CommitObject(parent)
	}
	return out
}

// supersedeHeld ends the held promotions, into l's environment, of the main commits a pin of
// l passed over: a window or a hold kept each out, and none will be pinned now that a newer
// commit is. Each gets a final status saying which commit superseded it, its "Promote to
// <env>" check run loses its buttons, and its check run of the environment stops showing a
// hold. Failures are logged: the pin stands.
func (p *Promoter) supersedeHeld(ctx context.Context, l Locator, passed []string) {
	for _, sha := range passed {
		old := l.At(sha)
		st, err := p.currentStatus(ctx, old)
		if err == nil && isHeld(st) {
			err = p.endHeld(ctx, old, l.Commit)
		}
		if err != nil {
			logger(ctx).Warn().Err(err).Str("environment", l.Env).Str("main", sha).Msg("ending a held promotion passed over")
		}
	}
}

// endHeld ends the held promotion of old, superseded by the pin of main commit by.
func (p *Promoter) endHeld(ctx context.Context, old Locator, by string) error {
	why := "superseded by " + short(by)
	if err := p.status(ctx, old, "error", why); err != nil {
		return err
	}
	logger(ctx).Info().Str("environment", old.Env).Str("main", old.Commit).Str("by", by).Msg("held promotion superseded")
	if err := p.unshowHold(ctx, old); err != nil {
		return err
	}
	return p.endApproval(ctx, old, "neutral", "Superseded by main "+short(by),
		fmt.Sprintf("Main %s was held, then main %s was pinned into %s past it: %s is not promoted there.", short(old.Commit), short(by), old.Env, short(old.Commit)))
}
