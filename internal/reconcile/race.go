package reconcile

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
)

// leaseError says that a push or delete of the app's branch lost its lease: the branch moved
// since it was read.
type leaseError struct {
	Branch      string
	Read, Wrote plumbing.Hash // the head the lease was taken on; what was to be written (zero: a delete)
	err         error
}

func (e *leaseError) Error() string {
	return fmt.Sprintf("%s moved since it was read at %s: %v", e.Branch, short(e.Read.String()), e.err)
}

func (e *leaseError) Unwrap() error { return e.err }

// leased names the branch and heads of a write that lost its lease; other errors pass as they are.
func leased(err error, branch string, read, wrote plumbing.Hash) error {
	if errors.Is(err, gitcache.ErrStale) {
		return &leaseError{Branch: branch, Read: read, Wrote: wrote, err: err}
	}
	return err
}

// lostRace reports whether err says that another writer changed what a reconcile read: its
// lease was lost, the GitOps branch was built from newer sources, or the base branch moved
// under the pull request (a merge). Reading the state again settles it.
func lostRace(err error) bool {
	return errors.Is(err, gitcache.ErrStale) || errors.Is(err, ErrOlderInputs) || errors.Is(err, ghport.ErrNoCommits)
}

// logRace says at info level which race a reconcile lost, with the branch and heads involved.
func logRace(ctx context.Context, env envref.Env, attempt int, err error) {
	ev := zerolog.Ctx(ctx).Info().Str("environment", env.Name).Str("control_plane", env.ControlPlane.String()).Int("attempt", attempt+1)
	var le *leaseError
	var oe *olderInputsError
	switch {
	case errors.As(err, &le):
		ev = ev.Str("branch", le.Branch).Str("read_head", le.Read.String()).Str("pushed", le.Wrote.String())
	case errors.As(err, &oe):
		ev = ev.Str("source", oe.Source).Str("read", oe.Read).Str("built_from", oe.Built)
	}
	ev.Err(err).Msg("lost a race with another writer; reading the state again")
}
