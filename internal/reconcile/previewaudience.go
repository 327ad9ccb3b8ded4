package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// Author is who opened a pull request, as GitHub says.
type Author struct {
	Login string
	// Association is the pull request's author_association: OWNER, MEMBER and COLLABORATOR may
	// have write permission; anything else (CONTRIBUTOR, FIRST_TIMER, NONE…) has none.
	Association string
	Fork        bool // the head branch is on another repository than the base
}

// Audience is what a preview may show the author of its pull request.
type Audience struct {
	Full bool   // everything: the diff of every file, every error
	Why  string // when not: why the preview shows counts and assignment names only
}

// PullRequestOf gives the facts a preview needs of a pull request of repo, as GitHub sends it
// in an event or answers it: its head, base and author. A head on another repository than the
// base (or on a deleted one) is a fork.
func PullRequestOf(inst int64, repo envref.Repo, pr *github.PullRequest) PullRequest {
	head := pr.GetHead().GetRepo()
	fork := head == nil || !strings.EqualFold(head.GetFullName(), repo.String())
	return PullRequest{Installation: inst, Repo: repo, Number: pr.GetNumber(), HeadSHA: pr.GetHead().GetSHA(), Base: pr.GetBase().GetRef(),
		Author: Author{Login: pr.GetUser().GetLogin(), Association: pr.GetAuthorAssociation(), Fork: fork}}
}

// Audience decides what the preview of a pull request may show its author: everything when
// the author has write permission on the pull request's repository and the head is on that
// repository; otherwise (a fork, a read or triage user, anyone else) counts and assignment
// names only, until a user with write permission approves a full preview on the check run. The
// permission is asked once per preview, and only of an author who may have it; a permission
// that cannot be read counts as none.
func (r *Reconciler) Audience(ctx context.Context, pr PullRequest) Audience {
	a := pr.Author
	switch {
	case a.Fork:
		return Audience{Why: "the pull request comes from a fork"}
	case a.Login == "":
		return Audience{Why: "its author is unknown"}
	case !mayWrite(a.Association):
		return Audience{Why: fmt.Sprintf("@%s is not a collaborator of %s", a.Login, pr.Repo)}
	}
	level, err := r.permission(ctx, pr.Installation, pr.Repo, a.Login)
	if err != nil {
		zerolog.Ctx(ctx).Warn().Err(err).Str("user", a.Login).Msg("preview shows counts only: the author's permission could not be read")
		return Audience{Why: fmt.Sprintf("the permission of @%s on %s could not be read", a.Login, pr.Repo)}
	}
	if !ghport.CanWrite(level) {
		return Audience{Why: fmt.Sprintf("@%s has %s permission on %s", a.Login, level, pr.Repo)}
	}
	return Audience{Full: true}
}

// mayWrite reports whether an author_association allows write permission ("": not known).
func mayWrite(association string) bool {
	switch association {
	case "", "OWNER", "MEMBER", "COLLABORATOR":
		return true
	}
	return false
}

func (r *Reconciler) permission(ctx context.Context, inst int64, repo envref.Repo, user string) (string, error) {
	gh, err := r.clients.Client(ctx, inst)
	if err != nil {
		return "", err
	}
	level, err := gh.Permission(ctx, repo, user)
	if err != nil {
		return "", fmt.Errorf("permission of %s on %s: %w", user, repo, err)
	}
	return level, nil
}

// ReadPullRequest reads a pull request as GitHub has it now, and whether it is open (a
// pull request that no longer exists is not).
func (r *Reconciler) ReadPullRequest(ctx context.Context, inst int64, repo envref.Repo, number int) (PullRequest, bool, error) {
	gh, err := r.clients.Client(ctx, inst)
	if err != nil {
		return PullRequest{}, false, err
	}
	pr, err := gh.PullRequest(ctx, repo, number)
	if errors.Is(err, ghport.ErrNotFound) {
		return PullRequest{}, false, nil
	}
	if err != nil {
		return PullRequest{}, false, fmt.Errorf("pull request #%d of %s: %w", number, repo, err)
	}
	return PullRequestOf(inst, repo, pr), pr.GetState() == "open", nil
}
