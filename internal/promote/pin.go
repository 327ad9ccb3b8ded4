package promote

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// maxPinAttempts bounds how often a pin is tried again after losing a race for its branch.
const maxPinAttempts = 4

var commitLine = regexp.MustCompile(`(?m)^(\s+)commit:[^\n]*$`)
var pathLine = regexp.MustCompile(`(?m)^(\s+)path:[^\n]*$`)

// Pin writes l's commit into the BaseRepo "main" of stage s (one commit on its branch) and
// marks the main commit pending; an older commit still on its way there is marked superseded.
// A pin only moves forward along main: a commit that is an ancestor of the pinned one is
// refused with ErrBehind, checked on the branch head the edit is leased on, so that replicas
// racing with older and newer commits end with the newest (a commit on a rewritten main,
// unrelated to the pin, is pinned: main says so). A commit already pinned changes nothing.
func (p *Promoter) Pin(ctx context.Context, l Locator, s *scheduling.Stage, why string) error {
	return p.pin(ctx, l, s, why, false)
}

// pin is Pin; back allows the pin to move back to an ancestor (a rollback).
func (p *Promoter) pin(ctx context.Context, l Locator, s *scheduling.Stage, why string, back bool) error {
	remote, err := p.remote(ctx, l.Installation, l.ControlPlane)
	if err != nil {
		return err
	}
	branch := s.Env.Spec.ControlPlane.Branch
	for attempt := 1; ; attempt++ {
		old, passed, err := p.pinOnce(ctx, remote, branch, l, why, back)
		switch {
		case err == nil && old == l.Commit:
			return p.ensurePending(ctx, l)
		case err == nil:
			reason, _, _ := strings.Cut(why, "\n") // without the trailers
			p.record(ctx, audit.KindPin, l, old, reason)
			p.pinned(ctx, l, branch)
			if old != "" && !back {
				p.supersede(ctx, l.At(old), l.Commit)
			}
			p.supersedeHeld(ctx, l, passed)
			return p.status(ctx, l, "pending", descAwaitMerge)
		case attempt == maxPinAttempts || !errors.Is(err, gitcache.ErrStale):
			return fmt.Errorf("pin %s into %s: %w", short(l.Commit), l.Env, err)
		}
		logger(ctx).Info().Str("environment", l.Env).Str("branch", branch).Str("main", l.Commit).Err(err).
			Msg("pin lost a race for its branch; reading it again")
	}
}

// pinned tells the scheduler that env's branch moved, so that its GitOps pull request follows.
func (p *Promoter) pinned(ctx context.Context, l Locator, branch string) {
	if p.sched != nil {
		p.sched.Pinned(ctx, envref.Env{Installation: l.Installation, ControlPlane: l.ControlPlane, Name: l.Env}, branch)
	}
}

// ensurePending marks a commit that is pinned already as waiting for its merge when it has no
// status yet (its status could not be written when it was pinned).
func (p *Promoter) ensurePending(ctx context.Context, l Locator) error {
	st, err := p.currentStatus(ctx, l)
	if err != nil || st != nil {
		return err
	}
	return p.status(ctx, l, "pending", descAwaitMerge)
}

// pinOnce edits base-repo.yaml on the environment branch and pushes it, leased on the head it
// read; it returns the old pin and, for a pin forward, the main commits it passes over (see
// passedOver). A commit older than the old pin is refused (ErrBehind).
func (p *Promoter) pinOnce(ctx context.Context, remote gitcache.Remote, branch string, l Locator, why string, back bool) (old string, passed []string, err error) {
	err = p.cache.Use(ctx, remote, []string{branch, gitsource.MainBranch}, func(s *gitcache.Session) error {
		head := s.Head(branch)
		if head.IsZero() {
			return fmt.Errorf("control plane %s has no branch %q", l.ControlPlane, branch)
		}
		file, text, pinned, err := baseRepoFile(s.Repo, head)
		if err != nil {
			return err
		}
		old = pinned
		if old == l.Commit {
			return nil
		}
		if !back && isAncestor(s.Repo, l.Commit, old) {
			return fmt.Errorf("main %s is an ancestor of %s, which %s pins: %w", short(l.Commit), short(old), branch, ErrBehind)
		}
		msg := fmt.Sprintf("Promote main %s to %s\n\nKalypso-Promoted: %s\nKalypso-Reason: %s\n", short(l.Commit), branch, l.Commit, why)
		commit, err := p.edit(s.Repo, head, file, pinText(text, l.Commit), msg)
		if err != nil {
			return err
		}
		if !back {
			passed = passedOver(s.Repo, l.Commit, old)
		}
		return s.Push(branch, commit, head)
	})
	return old, passed, err
}

// edit commits one file's new text on top of head.
func (p *Promoter) edit(repo *git.Repository, head plumbing.Hash, file, text, msg string) (plumbing.Hash, error) {
	baseTree, err := treeHash(repo, head)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	tree, err := gitops.Edit(repo, baseTree, map[string][]byte{file: []byte(text)})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return gitops.Commit(repo, tree, head, msg, p.now())
}

func treeHash(repo *git.Repository, commit plumbing.Hash) (plumbing.Hash, error) {
	c, err := repo.CommitObject(commit)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read commit %s: %w", commit, err)
	}
	return c.TreeHash, nil
}

// pinText sets the commit of a BaseRepo document, adding the field after `path:` if missing.
func pinText(text, sha string) string {
	if commitLine.MatchString(text) {
		return commitLine.ReplaceAllString(text, "${1}commit: "+sha)
	}
	loc := pathLine.FindStringSubmatchIndex(text)
	if loc == nil {
		return text
	}
	indent := text[loc[2]:loc[3]]
	return text[:loc[1]] + "\n" + indent + "commit: " + sha + text[loc[1]:]
}

// baseRepoFile finds the file of the environment branch that declares BaseRepo "main".
func baseRepoFile(repo *git.Repository, head plumbing.Hash) (file, text, pin string, err error) {
	fsys, err := gitsource.TreeFS(repo, head)
	if err != nil {
		return "", "", "", err
	}
	file, pin, ok := scheduling.FindBaseRepo(scheduling.Source{FS: fsys})
	if !ok {
		return "", "", "", fmt.Errorf("no BaseRepo named main on the environment branch")
	}
	return file, string(gitops.ReadFile(repo, head, file)), pin, nil
}
