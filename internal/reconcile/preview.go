package reconcile

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/preview"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// PullRequest is a pull request into a branch of a control plane, read through the control
// plane's own refs/pull/N/… refs: its content is never fetched from a fork's URL.
type PullRequest struct {
	Installation int64
	Repo         envref.Repo // the base repository, a control plane
	Number       int
	HeadSHA      string // the pull request's head commit, which the check runs are on
	Base         string // the branch it is merged into
	Author       Author // who opened it
	// Audience is what its preview may show, as Reconciler.Audience decides it once per
	// preview; the zero value shows counts and names only.
	Audience Audience
}

// PreviewTarget says what the pull request's result stands for.
type PreviewTarget int

// What a pull request's result is previewed as.
const (
	AsEnvironmentBranch PreviewTarget = iota // the environment's branch
	AsMain                                   // main, as if pinned into the environment
	AsWorkload                               // a registered branch of a workload repository
)

// Preview is what a pull request would do to one environment. Nothing is written anywhere.
type Preview struct {
	Env        envref.Env
	Read       string         // "merge" (GitHub's test merge) or "head"
	Commit     string         // the commit read
	As         PreviewTarget  // what the commit was read as
	Proposed   *render.Result // the environment with the pull request
	Prev, Next render.Tree    // the environment's GitOps tree without and with it, or the part that may differ
	Plan       *render.Plan
	Blast      preview.Blast
	Violations []preview.Violation // limits of the environment's guard the change exceeds
	// NotPreviewed lists the workload branches the pull request's registrations name that its
	// base does not register yet: nothing of them was fetched.
	NotPreviewed []string
}

// Preview computes env with the pull request's result as its branch or as main. The guard
// comes from main's head of the control plane, never from the pull request, so that a pull
// request cannot relax the limit it is checked against; and the pull request's side reads only
// the workload branches its base already registers, so that a pull request cannot make the app
// read a repository with its installation token (see registeredOnly).
func (r *Reconciler) Preview(ctx context.Context, env envref.Env, pr PullRequest, as PreviewTarget) (*Preview, error) {
	token, err := r.clients.Token(ctx, env.Installation)
	if err != nil {
		return nil, fmt.Errorf("installation %d token: %w", env.Installation, err)
	}
	var cur, next scheduling.Inputs
	var curErrs, nextErrs scheduling.Errors
	var limits *scheduling.Limits
	out := &Preview{Env: env}
	remote := gitcache.Remote{Owner: env.ControlPlane.Owner, Name: env.ControlPlane.Name, Token: token}
	ws := &cachedWorkloads{ctx: ctx, cache: r.cache, token: token, policy: r.policy}
	gated := &registeredOnly{inner: ws, base: pr.Base, refused: &out.NotPreviewed}
	out.As = as
	if as == AsWorkload {
		gated.inner = &cachedWorkloads{ctx: ctx, cache: r.cache, token: token, policy: r.policy, pull: &pr, read: out}
	}
	err = r.cache.Use(ctx, remote, nil, func(s *gitcache.Session) error {
		var err error
		if cur, curErrs, err = gitsource.InputsAt(s.Repo, env.Name, ws, plumbing.ZeroHash, plumbing.ZeroHash, gitsource.Limits(r.policy)); err != nil {
			return err
		}
		if as == AsMain {
			if gated.registered, err = registeredOnMain(s, env.Name, r.policy); err != nil {
				return err
			}
		}
		mainAt, envAt := plumbing.ZeroHash, plumbing.ZeroHash
		if as != AsWorkload {
			commit, which, err := s.FetchPull(pr.Number)
			if err != nil {
				return err
			}
			out.Read, out.Commit = which, commit.String()
			if mainAt, envAt = plumbing.ZeroHash, commit; as == AsMain {
				mainAt, envAt = commit, plumbing.ZeroHash
			}
		}
		if next, nextErrs, err = gitsource.InputsAt(s.Repo, env.Name, gated, mainAt, envAt, gitsource.Limits(r.policy)); err != nil {
			return err
		}
		limits, err = guardOnMain(s, env.Name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("preview %s of pull request #%d: %w", env.Key(), pr.Number, err)
	}
	currentSnap := r.load(env, cur, curErrs)
	if as != AsMain { // the base is the environment as it is
		gated.registered = registrations(currentSnap)
	}
	current, _ := r.results.render(env, currentSnap)
	proposed := r.load(env, next, nextErrs)
	proposed.Errors = withoutRefusals(proposed.Errors, out.NotPreviewed)
	out.Proposed = r.results.peek(env, proposed)
	out.compare(current)
	out.Violations = preview.Check(limits, out.Blast)
	return out, nil
}

// compare sets the trees, the plan and the blast of a preview from the environment's current
// result: only the part of the trees that may differ when the proposed result was computed
// from the current one (render.Result.Delta), the whole trees otherwise.
func (p *Preview) compare(current *render.Result) {
	root := p.Proposed.Root
	prev, next, ok := p.Proposed.Delta(current)
	if !ok {
		prev = current.Apply(render.Tree{})
		next = p.Proposed.Apply(prev)
	}
	p.Prev, p.Next = prev, next
	p.Plan = render.Diff(prev, next, root)
	p.Blast = preview.Measure(prev, next, root)
	if ok {
		p.Blast.Assignments, p.Blast.ClusterTypes = current.Folders()
	}
}

// load reads the workloads and assembles a snapshot of inputs already read.
func (r *Reconciler) load(env envref.Env, in scheduling.Inputs, errs scheduling.Errors) *scheduling.Snapshot {
	in.Policy = r.policy
	in.Seniority = r.seniority(env.ControlPlane, in)
	snap := scheduling.Load(in)
	snap.Errors = append(errs, snap.Errors...).Sorted()
	return snap
}

// guardOnMain reads an environment's guard from main's head of the session's control plane.
func guardOnMain(s *gitcache.Session, env string) (*scheduling.Limits, error) {
	envs, err := gitsource.MainEnvironments(s.Repo)
	if err != nil || envs == nil {
		return nil, err
	}
	return scheduling.GuardOf(envs, env), nil
}
