package reconcile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Only forward: a kalypso/<env> head built from newer sources is never replaced by one built
// from older sources. Every commit the app writes there names, as Kalypso-Source trailers,
// the commit of each source it was computed from. Before it writes, a reconcile reads the
// trailers of the head it is about to replace (its push is leased on exactly that head) and
// compares each source commit with the one it read itself: when the head's commit is a strict
// descendant of its own, someone computed the environment from newer inputs than this
// reconcile did, which then reads its inputs again instead of writing.
//
// This holds across replicas without any lock service: the lease makes the push a
// compare-and-swap of the branch, so whichever of two replicas pushes second has checked the
// very head the first one wrote (or its lease fails, it fetches again and checks the new head).
// A source's history only grows (a force-push that rewrites it makes the old commit unknown
// or unrelated, and a reconcile that read the rewritten branch then goes ahead).

// ErrOlderInputs says that the GitOps branch was built from newer source commits than a
// reconcile read: it reads its inputs again rather than write.
var ErrOlderInputs = errors.New("inputs older than what the GitOps branch was built from")

// sourceTrailer starts the trailer that names a source commit: "Kalypso-Source: <name> <commit>".
const sourceTrailer = "Kalypso-Source: "

// sourceTrailers reads the source commits a commit message names, by source name.
func sourceTrailers(message string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(message, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), sourceTrailer)
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, ' ')
		if i <= 0 || !commitSHA(rest[i+1:]) {
			continue
		}
		out[rest[:i]] = rest[i+1:]
	}
	return out
}

// commitSHA reports whether s is a full hexadecimal commit ID.
func commitSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// builtFrom returns the source commits of what the GitOps branches hold: the trailers of the
// app's branch head, or, when that branch is gone (its pull request merged and the branch
// deleted), of the GitOps branch's head and its parents (a merge, a rebased or squashed commit).
func builtFrom(repo *git.Repository, appHead, base plumbing.Hash) map[string]string {
	if !appHead.IsZero() {
		return trailersOf(repo, appHead)
	}
	c, err := repo.CommitObject(base)
	if err != nil {
		return nil
	}
	if t := sourceTrailers(c.Message); len(t) > 0 {
		return t
	}
	for _, p := range c.ParentHashes {
		if t := trailersOf(repo, p); len(t) > 0 {
			return t
		}
	}
	return nil
}

// trailersOf reads the source trailers of a commit (none when it cannot be read).
func trailersOf(repo *git.Repository, commit plumbing.Hash) map[string]string {
	c, err := repo.CommitObject(commit)
	if err != nil {
		return nil
	}
	return sourceTrailers(c.Message)
}

// newer is a source whose commit in the GitOps branch is newer than the one a reconcile read.
type newer struct {
	Source, Read, Built string
}

// olderInputsError says which source the reconcile read older than the branch has it.
type olderInputsError struct{ newer }

func (e *olderInputsError) Error() string {
	return fmt.Sprintf("source %s: the GitOps branch was built from %s, a descendant of %s which this reconcile read: %v",
		e.Source, short(e.Built), short(e.Read), ErrOlderInputs)
}

func (e *olderInputsError) Unwrap() error { return ErrOlderInputs }

// sourceAncestry tells how a source commit the branch was built from relates to the one read.
type sourceAncestry func(src scheduling.SourceCommit, built string) (descendant, known bool)

// checkForward returns an olderInputsError when any source commit of built is a strict
// descendant of the commit the reconcile read for that source. A commit the reconcile's
// cache does not know may be newer: it counts as newer on the first attempt (reading again
// fetches it), and not after (it is then not on the branch any more).
//
// The second source, main, is pinned by the first, the environment branch: when the
// environment branch read is a strict descendant of the one the GitOps branch was built from,
// the main commit it pins is a decision made there — a rollback pins an older one — and main
// is not compared.
func checkForward(sources []scheduling.SourceCommit, built map[string]string, ancestry sourceAncestry, firstAttempt bool) error {
	repinned := pinMovedOn(sources, built, ancestry)
	for i, src := range sources {
		theirs, ok := built[src.Name]
		if !ok || theirs == src.Commit || src.Commit == "" || (i == 1 && src.Name == pinnedSource && repinned) {
			continue
		}
		descendant, known := ancestry(src, theirs)
		if descendant || (!known && firstAttempt) {
			return &olderInputsError{newer{Source: src.Name, Read: src.Commit, Built: theirs}}
		}
	}
	return nil
}

// pinnedSource names the source an environment branch pins: its BaseRepo "main".
const pinnedSource = "main"

// pinMovedOn reports whether the environment branch read (the first source) is a strict
// descendant of the one the GitOps branch was built from.
func pinMovedOn(sources []scheduling.SourceCommit, built map[string]string, ancestry sourceAncestry) bool {
	if len(sources) < 2 {
		return false
	}
	env := sources[0]
	theirs, ok := built[env.Name]
	if !ok || theirs == "" || env.Commit == "" || theirs == env.Commit {
		return false
	}
	ahead, _ := ancestry(scheduling.SourceCommit{Name: env.Name, Repo: env.Repo, Branch: env.Branch, Commit: theirs}, env.Commit)
	return ahead
}

// ancestryIn answers sourceAncestry from the git cache: each source's repository as last
// fetched (the control plane for the environment branch and main). The GitOps session s is
// held: a source kept in the same repository is read through it, any other one through its
// own cached repository. Lock order: a GitOps session may read a source's cache, never the
// other way round.
func (r *Reconciler) ancestryIn(s *gitcache.Session, gitopsRepo, controlPlane envref.Repo) sourceAncestry {
	return func(src scheduling.SourceCommit, built string) (bool, bool) {
		repo := controlPlane
		if src.Repo != "" {
			if rr, err := envref.RepoOf(src.Repo); err == nil {
				repo = rr
			}
		}
		if repo == gitopsRepo {
			return descends(s.Repo, src.Commit, built)
		}
		var descendant, known bool
		_ = r.cache.UseCached(gitcache.Remote{Owner: repo.Owner, Name: repo.Name}, func(cs *gitcache.Session) error {
			descendant, known = descends(cs.Repo, src.Commit, built)
			return nil
		})
		return descendant, known
	}
}

// descends reports whether commit b is a strict descendant of commit a, and whether b is
// known in repo at all.
func descends(repo *git.Repository, a, b string) (descendant, known bool) {
	cb, err := repo.CommitObject(plumbing.NewHash(b))
	if err != nil {
		return false, false
	}
	ca, err := repo.CommitObject(plumbing.NewHash(a))
	if err != nil {
		return false, true
	}
	ok, err := ca.IsAncestor(cb)
	return err == nil && ok && a != b, true
}

func short(sha string) string { return sha[:min(7, len(sha))] }
