package reconcile

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/internal/preview"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// guard reads the environment's spec.guard from main's head as last fetched.
func (r *Reconciler) guard(env envref.Env) (*scheduling.Limits, error) {
	var limits *scheduling.Limits
	err := r.cache.UseCached(gitcache.Remote{Owner: env.ControlPlane.Owner, Name: env.ControlPlane.Name}, func(s *gitcache.Session) error {
		var err error
		limits, err = guardOnMain(s, env.Name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("guard of %s: %w", env.Key(), err)
	}
	return limits, nil
}

// holds measures the change the pull request would propose against the GitOps branch and
// checks it against the environment's guard. Over a limit, it holds the change (out.Held)
// unless the check run of the environment branch's head commit records an acceptance. size
// measures the GitOps branch; it is called only when the environment has a guard.
func (r *Reconciler) holds(ctx context.Context, out *Outcome, p *gitops.Proposal, size func() (gitops.Size, error)) (bool, error) {
	if out.limits.Empty() {
		return false, nil
	}
	before, err := size()
	if err != nil {
		return false, err
	}
	violations := preview.Check(out.limits, p.Blast(before))
	if len(violations) == 0 {
		return false, nil
	}
	run, err := r.envCheckRun(ctx, out)
	if err != nil {
		return false, err
	}
	if line := acceptanceIn(run.GetOutput().GetSummary(), changeDigest(out)); line != "" {
		out.Accepted = line
		return false, nil
	}
	out.Held = violations
	return true, nil
}

// envCheckRun returns the check run of the environment on its branch's head commit, or nil.
func (r *Reconciler) envCheckRun(ctx context.Context, out *Outcome) (*github.CheckRun, error) {
	sha := envCommit(out)
	if sha == "" {
		return nil, nil
	}
	gh, err := r.clients.Client(ctx, out.Env.Installation)
	if err != nil {
		return nil, err
	}
	return ghport.FindCheckRun(ctx, gh, out.Env.ControlPlane, sha, CheckName(out.Env.Name), CheckExternalID(out.Env.ControlPlane, out.Env.Name))
}

// envCommit is the environment branch commit the outcome was computed from.
func envCommit(out *Outcome) string {
	if len(out.Sources) == 0 {
		return ""
	}
	return out.Sources[0].Commit
}

// HeldOn is the commit whose check run offers to accept a held change: the environment
// branch's head commit the outcome was computed from; nil when nothing is held.
func HeldOn(out *Outcome) *Commit {
	if len(out.Held) == 0 || len(out.Sources) == 0 {
		return nil
	}
	src := out.Sources[0]
	c := BranchCommit(out.Env.Installation, out.Env.ControlPlane, src.Name, src.Commit)
	return &c
}
