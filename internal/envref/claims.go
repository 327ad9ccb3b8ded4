package envref

import (
	"context"
	"errors"
	"fmt"
)

// ErrClaimed is returned when an environment would write a GitOps branch that another
// environment already writes: a GitOps branch belongs to exactly one environment of one
// control plane.
var ErrClaimed = errors.New("GitOps branch belongs to another environment")

// ErrUndeclared is returned for an environment whose control plane the operator did not
// declare in the controlPlanes setting.
var ErrUndeclared = errors.New("repository is not a declared control plane (setting controlPlanes)")

// Claim checks that env may write branch base of gitops and its own branch kalypso/<env>
// there. Of the environments that name the same branches, the first in (control plane,
// environment) order owns them; every other one is refused with ErrClaimed and never writes.
func (ix *Index) Claim(ctx context.Context, env Env, gitops Repo, base string) error {
	if !ix.Declared(env.ControlPlane) {
		return fmt.Errorf("environment %s of %s: %w", env.Name, env.ControlPlane, ErrUndeclared)
	}
	envs, err := ix.Environments(ctx, env.Installation)
	if err != nil {
		return err
	}
	mine := EnvInfo{Env: env, GitOps: gitops, GitOpsBranch: base}
	for _, e := range envs {
		if e.Env == env {
			return nil
		}
		if collides(e, mine) {
			return fmt.Errorf("%w: environment %s of %s also writes branch %s or %s%s of %s, and owns it because it sorts first; "+
				"point one of the two GitOpsRepo objects at another branch or repository", ErrClaimed,
				e.Env.Name, e.Env.ControlPlane, base, BranchPrefix, env.Name, gitops)
		}
	}
	return nil
}

// collides reports whether two environments write a common branch of the same GitOps repository:
// the same base branch, or the same app branch kalypso/<env>, or one's base is the other's app branch.
func collides(a, b EnvInfo) bool {
	if a.GitOps != b.GitOps || a.GitOps == (Repo{}) {
		return false
	}
	aApp, bApp := AppBranch(a.Env.Name), AppBranch(b.Env.Name)
	return a.GitOpsBranch == b.GitOpsBranch || aApp == bApp || a.GitOpsBranch == bApp || b.GitOpsBranch == aApp
}
