// Package reconcile converges an environment's GitOps pull request to what its control plane
// says, and reports the outcome on GitHub as check runs.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// BranchPrefix starts the name of the app's branch of each environment: `kalypso/<environment>`.
const BranchPrefix = "kalypso/"

// Repo names a repository.
type Repo struct {
	Owner, Name string
}

// String formats the repository as owner/name.
func (r Repo) String() string { return r.Owner + "/" + r.Name }

// Env identifies one environment of one control plane in one installation.
type Env struct {
	Installation int64
	ControlPlane Repo
	Name         string
}

// Clients gives what the reconciler needs from an installation: a REST client and a git token.
type Clients interface {
	Client(ctx context.Context, installation int64) (*github.Client, error)
	Token(ctx context.Context, installation int64) (string, error)
}

// Reconciler computes environments from git and converges their GitOps pull requests.
type Reconciler struct {
	cache   *gitcache.Cache
	clients Clients
	now     func() time.Time
	envs    sync.Map // environment key → *sync.Mutex: one reconcile of an environment at a time
	reports sync.Map // repository and environment → *sync.Mutex: one check-run report at a time
	results *results // the last result of each environment, to render only what changed
	claims  Claims   // who may write which GitOps branch; nil allows every environment
	policy  scheduling.Policy
}

// Claims decides whether an environment may write a branch of a GitOps repository.
type Claims interface {
	Claim(ctx context.Context, env Env, gitops Repo, base string) error
}

// UseClaims makes every write to a GitOps repository ask c first. Call it before the
// reconciler is used.
func (r *Reconciler) UseClaims(c Claims) { r.claims = c }

// New returns a reconciler over a git cache and installation clients.
func New(cache *gitcache.Cache, clients Clients, opts ...Option) *Reconciler {
	r := &Reconciler{cache: cache, clients: clients, now: time.Now, results: newResults()}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Option configures a Reconciler.
type Option func(*Reconciler)

// WithPolicy bounds what is read from repositories and what workload repositories may say.
func WithPolicy(p scheduling.Policy) Option {
	return func(r *Reconciler) { r.policy = p }
}

// WithRenderLimits bounds the rendering of every environment (render.DefaultLimits without).
func WithRenderLimits(l render.Limits) Option {
	return func(r *Reconciler) { r.results.opts = []render.Option{render.WithLimits(l)} }
}

// Outcome is what reconciling an environment found and did.
type Outcome struct {
	Env      Env
	Result   *render.Result
	Sources  []scheduling.SourceCommit
	GitOps   Repo
	Base     string       // the GitOps environment branch
	Plan     *render.Plan // what the pull request changes in the GitOps branch
	PR       *github.PullRequest
	Promoted bool // the pull request changes the promoted commit
	Commit   string
	Render   render.Stats // how much was rendered again
}

// Environment computes an environment and converges branch kalypso/<env> and its pull request.
func (r *Reconciler) Environment(ctx context.Context, env Env) (*Outcome, error) {
	token, err := r.clients.Token(ctx, env.Installation)
	if err != nil {
		return nil, fmt.Errorf("installation %d token: %w", env.Installation, err)
	}
	// Inputs are read and the result pushed under one lock, so that a reconcile that read older
	// inputs can never push after one that read newer ones.
	m, _ := r.envs.LoadOrStore(env.ControlPlane.String()+"/"+env.Name, &sync.Mutex{})
	m.(*sync.Mutex).Lock()
	defer m.(*sync.Mutex).Unlock()
	out := &Outcome{Env: env}
	ph := startPhases(ctx)
	defer ph.log(env.Name)
	ctx = withPhases(ctx, ph)
	snap, err := r.snapshot(ctx, env, token)
	if err != nil {
		r.results.drop(env)
		return nil, err
	}
	ph.done("load")
	out.Result, out.Render = r.results.render(env, snap)
	ph.done("render")
	out.Sources = snap.Sources
	if !out.Result.HasTarget {
		return out, nil // nothing may be written; the errors say why
	}
	if out.GitOps, err = repoOf(snap.GitOpsRepo.Spec.Repo); err != nil {
		return out, fmt.Errorf("%s: %w", snap.GitOpsRepo.Ref(), err)
	}
	out.Base = snap.GitOpsRepo.Spec.Branch
	if r.claims != nil {
		if err := r.claims.Claim(ctx, env, out.GitOps, out.Base); err != nil {
			return out, err
		}
	}
	for attempt := 0; ; attempt++ {
		err = r.converge(ctx, token, out)
		if !errors.Is(err, gitcache.ErrStale) || attempt == 3 {
			return out, err
		}
	}
}

// Validate computes an environment with main at a given commit instead of its pin, writing nothing.
func (r *Reconciler) Validate(ctx context.Context, env Env, main string) (*Outcome, error) {
	token, err := r.clients.Token(ctx, env.Installation)
	if err != nil {
		return nil, fmt.Errorf("installation %d token: %w", env.Installation, err)
	}
	snap, err := r.snapshotAt(ctx, env, token, plumbing.NewHash(main))
	if err != nil {
		return nil, err
	}
	return &Outcome{Env: env, Result: r.results.peek(env, snap), Sources: snap.Sources}, nil
}

// snapshot fetches the control plane and loads the environment.
func (r *Reconciler) snapshot(ctx context.Context, env Env, token string) (*scheduling.Snapshot, error) {
	return r.snapshotAt(ctx, env, token, plumbing.ZeroHash)
}

func (r *Reconciler) snapshotAt(ctx context.Context, env Env, token string, main plumbing.Hash) (*scheduling.Snapshot, error) {
	in, errs, err := r.inputs(ctx, env, token, main)
	if err != nil {
		return nil, err
	}
	in.Policy = r.policy
	in.Seniority = r.seniority(env.ControlPlane, in)
	snap := scheduling.Load(in) // reads workload repositories, each under its own lock
	snap.Errors = append(errs, snap.Errors...).Sorted()
	return snap, nil
}

// inputs fetches the control plane and reads the environment's sources into memory, holding
// the control plane's lock only for that (never while other repositories are locked).
func (r *Reconciler) inputs(ctx context.Context, env Env, token string, main plumbing.Hash) (scheduling.Inputs, scheduling.Errors, error) {
	unlock := r.cache.Lock(env.ControlPlane.Owner, env.ControlPlane.Name)
	defer unlock()
	repo, err := r.cache.Fetch(ctx, env.ControlPlane.Owner, env.ControlPlane.Name, token)
	if err != nil {
		return scheduling.Inputs{}, nil, err
	}
	return gitsource.InputsWithMain(repo, env.Name, &cachedWorkloads{ctx: ctx, cache: r.cache, token: token, maxBytes: r.policy.MaxFileBytes}, main)
}

func repoOf(url string) (Repo, error) {
	owner, name, err := scheduling.RepoSlug(url)
	return Repo{Owner: owner, Name: name}, err
}

// converge makes branch kalypso/<env> one commit on the GitOps branch with exactly the desired
// tree, and keeps one pull request for it; with nothing to change the pull request is closed.
func (r *Reconciler) converge(ctx context.Context, token string, out *Outcome) error {
	gh := out.GitOps
	unlock := r.cache.Lock(gh.Owner, gh.Name)
	defer unlock()
	branch := BranchPrefix + out.Env.Name
	ph := phasesOf(ctx)
	repo, err := r.cache.Fetch(ctx, gh.Owner, gh.Name, token, out.Base, branch)
	if err != nil {
		return err
	}
	ph.done("fetch_gitops")
	base := gitcache.Head(repo, out.Base)
	if base.IsZero() {
		return fmt.Errorf("GitOps repository %s has no branch %q", gh, out.Base)
	}
	changes, basePaths, baseTree, err := desiredChanges(repo, base, out)
	if err != nil {
		return err
	}
	ph.done("diff")
	appHead := gitcache.Head(repo, branch)
	if len(changes) == 0 {
		return r.retire(ctx, token, out, appHead)
	}
	tree, err := buildTree(repo, base, baseTree, basePaths, appHead, changes)
	if err != nil {
		return err
	}
	ph.done("tree")
	commit := appHead
	if appHead.IsZero() || !gitops.Same(repo, appHead, tree, base) {
		if commit, err = gitops.Commit(repo, tree, base, commitMessage(out), r.now()); err != nil {
			return err
		}
		if err := r.cache.Push(ctx, gh.Owner, gh.Name, token, branch, commit, appHead); err != nil {
			return err
		}
	}
	ph.done("push")
	out.Commit = commit.String()
	err = r.ensurePR(ctx, out, branch)
	ph.done("pull_request")
	return err
}

// desiredChanges compares the desired tree with the GitOps branch by blob hash, reading no blob;
// each changed path maps to its new content and hash, or to nil when it is removed.
func desiredChanges(repo *git.Repository, base plumbing.Hash, out *Outcome) (map[string]*gitops.Entry, map[string]plumbing.Hash, plumbing.Hash, error) {
	paths, baseTree, err := gitops.Paths(repo, base)
	if err != nil {
		return nil, nil, plumbing.ZeroHash, err
	}
	prev := make(render.Tree, len(paths))
	for p := range paths {
		prev[p] = nil // kept files come back as nil: unchanged
	}
	next := out.Result.Apply(prev)
	changes := map[string]*gitops.Entry{}
	var list []render.Change
	for p, content := range next {
		if content == nil {
			continue
		}
		h := gitops.BlobHash(content)
		old, existed := paths[p]
		switch {
		case existed && old == h:
			continue
		case existed:
			list = append(list, render.Change{Path: p, Kind: render.Changed})
		default:
			list = append(list, render.Change{Path: p, Kind: render.Added})
		}
		changes[p] = &gitops.Entry{Data: content, Hash: h}
	}
	for p := range paths {
		if _, ok := next[p]; !ok {
			changes[p] = nil
			list = append(list, render.Change{Path: p, Kind: render.Removed})
		}
	}
	out.Plan = render.GroupChanges(list, out.Result.Root)
	_, out.Promoted = changes[promotedPath(out.Result.Root)]
	return changes, paths, baseTree, nil
}

// buildTree writes the tree of base with changes applied. When the app's branch already is one
// commit on base, it starts from that commit's tree and writes only what differs from it, so an
// unchanged proposal of thousands of files costs nothing.
func buildTree(repo *git.Repository, base, baseTree plumbing.Hash, basePaths map[string]plumbing.Hash, appHead plumbing.Hash, changes map[string]*gitops.Entry) (plumbing.Hash, error) {
	head, err := repo.CommitObject(appHead)
	if appHead.IsZero() || err != nil || len(head.ParentHashes) != 1 || head.ParentHashes[0] != base {
		return gitops.EditEntries(repo, baseTree, changes)
	}
	headPaths, headTree, err := gitops.Paths(repo, appHead)
	if err != nil {
		return gitops.EditEntries(repo, baseTree, changes)
	}
	// want is the desired entry of a path: its change, else the base's file, else nothing.
	want := func(p string) *gitops.Entry {
		if e, ok := changes[p]; ok {
			return e
		}
		if h, ok := basePaths[p]; ok {
			return &gitops.Entry{Hash: h}
		}
		return nil
	}
	delta := map[string]*gitops.Entry{}
	seen := make(map[string]bool, len(headPaths))
	visit := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		e, h := want(p), plumbing.ZeroHash
		if e != nil {
			h = e.Hash
		}
		if headPaths[p] != h {
			delta[p] = e // nil deletes
		}
	}
	for p := range changes {
		visit(p)
	}
	for p := range headPaths {
		visit(p)
	}
	for p := range basePaths {
		visit(p)
	}
	return gitops.EditEntries(repo, headTree, delta)
}

func promotedPath(root string) string {
	if root == "" {
		return render.PromotedCommitPath
	}
	return root + "/" + render.PromotedCommitPath
}

// retire closes the app's pull request and deletes its branch when nothing is left to propose.
func (r *Reconciler) retire(ctx context.Context, token string, out *Outcome, appHead plumbing.Hash) error {
	branch := BranchPrefix + out.Env.Name
	pr, err := r.findPR(ctx, out, branch)
	if err != nil {
		return err
	}
	if pr != nil {
		if err := r.closePR(ctx, out, pr); err != nil {
			return err
		}
	}
	if !appHead.IsZero() {
		return r.cache.Delete(ctx, out.GitOps.Owner, out.GitOps.Name, token, branch, appHead)
	}
	return nil
}
