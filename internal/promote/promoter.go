// Package promote moves main's commits from environment to environment: it pins a commit into
// an environment's base-repo.yaml, waits for the clusters to report compliance on the merged
// GitOps commit, records the result on GitHub and promotes further, automatically or on approval.
package promote

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-github/v62/github"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// StatusContext is the commit status on a main commit that tells where it is in an environment.
func StatusContext(env string) string { return "kalypso/" + env }

// Status descriptions the app writes and reads back after a restart.
const (
	descAwaitMerge = "waiting for the GitOps pull request to be merged"
	descDeploying  = "clusters compliant"
)

// Promoter runs promotions. Waits run in the background and are found again after a restart.
type Promoter struct {
	cache   *gitcache.Cache
	clients reconcile.Clients
	index   *reconcile.Index
	now     func() time.Time
	poll    time.Duration
	base    context.Context
	waits   sync.Map // env key → *wait
	wg      sync.WaitGroup
}

// Option configures a Promoter.
type Option func(*Promoter)

// WithPollInterval sets how often cluster statuses are polled (default 15s).
func WithPollInterval(d time.Duration) Option { return func(p *Promoter) { p.poll = d } }

// New returns a Promoter; background waits stop when ctx is cancelled.
func New(ctx context.Context, cache *gitcache.Cache, clients reconcile.Clients, index *reconcile.Index, opts ...Option) *Promoter {
	p := &Promoter{cache: cache, clients: clients, index: index, now: time.Now, poll: 15 * time.Second, base: ctx}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Wait blocks until every background wait has ended.
func (p *Promoter) Wait() { p.wg.Wait() }

// chain reads the promotion chain declared on main of a control plane.
func (p *Promoter) chain(ctx context.Context, inst int64, cp reconcile.Repo) (*scheduling.Chain, *git.Repository, error) {
	token, err := p.clients.Token(ctx, inst)
	if err != nil {
		return nil, nil, err
	}
	unlock := p.cache.Lock(cp.Owner, cp.Name)
	defer unlock()
	repo, err := p.cache.Fetch(ctx, cp.Owner, cp.Name, token)
	if err != nil {
		return nil, nil, err
	}
	head := gitcache.Head(repo, gitsource.MainBranch)
	if head.IsZero() {
		return &scheduling.Chain{Stages: map[string]*scheduling.Stage{}}, repo, nil
	}
	fsys, err := gitsource.TreeFS(repo, head)
	if err != nil {
		return nil, nil, err
	}
	envs, _ := scheduling.LoadEnvironments(scheduling.Source{FS: fsys})
	chain, _ := scheduling.PromotionChain(envs)
	return chain, repo, nil
}

// PromoteMain pins a validated main commit into every first environment of the chain.
func (p *Promoter) PromoteMain(ctx context.Context, inst int64, cp reconcile.Repo, sha string) error {
	chain, _, err := p.chain(ctx, inst, cp)
	if err != nil {
		return err
	}
	for _, s := range chain.First() {
		if err := p.Pin(ctx, inst, cp, s, sha, "push to main"); err != nil {
			return err
		}
	}
	return nil
}

var commitLine = regexp.MustCompile(`(?m)^(\s+)commit:[^\n]*$`)
var pathLine = regexp.MustCompile(`(?m)^(\s+)path:[^\n]*$`)

// Pin writes sha into the environment's BaseRepo "main" (one commit on its branch) and marks the
// main commit pending; an older commit still on its way there is marked superseded. Any commit
// may be pinned: this is for main's own head, which is what main says.
func (p *Promoter) Pin(ctx context.Context, inst int64, cp reconcile.Repo, s *scheduling.Stage, sha, why string) error {
	return p.pin(ctx, inst, cp, s, sha, why, false)
}

// pinForward is Pin for a commit promoted from an upstream environment: it never moves the pin
// back to an ancestor of the commit pinned now (ErrBehind), checked on the branch head it edits.
func (p *Promoter) pinForward(ctx context.Context, inst int64, cp reconcile.Repo, s *scheduling.Stage, sha, why string) error {
	return p.pin(ctx, inst, cp, s, sha, why, true)
}

func (p *Promoter) pin(ctx context.Context, inst int64, cp reconcile.Repo, s *scheduling.Stage, sha, why string, forward bool) error {
	token, err := p.clients.Token(ctx, inst)
	if err != nil {
		return err
	}
	branch := s.Env.Spec.ControlPlane.Branch
	for attempt := 0; ; attempt++ {
		old, err := p.pinOnce(ctx, token, cp, branch, sha, why, forward)
		if err == nil {
			if old != "" && old != sha {
				p.supersede(ctx, inst, cp, s.Env.Name, old, sha)
			}
			return p.status(ctx, inst, cp, sha, s.Env.Name, "pending", descAwaitMerge)
		}
		if attempt == 3 || !isStale(err) {
			return fmt.Errorf("pin %s into %s: %w", short(sha), s.Env.Name, err)
		}
	}
}

func isStale(err error) bool {
	return err != nil && strings.Contains(err.Error(), gitcache.ErrStale.Error())
}

// pinOnce edits base-repo.yaml on the environment branch and pushes it; it returns the old pin.
// With forward, a commit older than the old pin is refused.
func (p *Promoter) pinOnce(ctx context.Context, token string, cp reconcile.Repo, branch, sha, why string, forward bool) (string, error) {
	unlock := p.cache.Lock(cp.Owner, cp.Name)
	defer unlock()
	repo, err := p.cache.Fetch(ctx, cp.Owner, cp.Name, token, branch, gitsource.MainBranch)
	if err != nil {
		return "", err
	}
	head := gitcache.Head(repo, branch)
	if head.IsZero() {
		return "", fmt.Errorf("control plane %s has no branch %q", cp, branch)
	}
	file, text, old, err := baseRepoFile(repo, head)
	if err != nil {
		return "", err
	}
	if old == sha {
		return old, nil
	}
	if forward && isAncestor(repo, sha, old) {
		return old, fmt.Errorf("main %s is an ancestor of %s, which %s pins: %w", short(sha), short(old), branch, ErrBehind)
	}
	next := pinText(text, sha)
	baseTree, err := treeHash(repo, head)
	if err != nil {
		return "", err
	}
	tree, err := gitops.Edit(repo, baseTree, map[string][]byte{file: []byte(next)})
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Promote main %s to %s\n\nKalypso-Promoted: %s\nKalypso-Reason: %s\n", short(sha), branch, sha, why)
	commit, err := gitops.Commit(repo, tree, head, msg, p.now())
	if err != nil {
		return "", err
	}
	return old, p.cache.Push(ctx, cp.Owner, cp.Name, token, branch, commit, head)
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

// status posts the main commit's status for an environment.
func (p *Promoter) status(ctx context.Context, inst int64, cp reconcile.Repo, sha, env, state, desc string) error {
	gh, err := p.clients.Client(ctx, inst)
	if err != nil {
		return err
	}
	_, _, err = gh.Repositories.CreateStatus(ctx, cp.Owner, cp.Name, sha, &github.RepoStatus{
		State: &state, Context: github.String(StatusContext(env)), Description: github.String(truncate(desc, 140))})
	if err != nil {
		return fmt.Errorf("status %s on %s@%s: %w", StatusContext(env), cp, short(sha), err)
	}
	return nil
}

// supersede ends an older commit's promotion into env, if it is still under way.
func (p *Promoter) supersede(ctx context.Context, inst int64, cp reconcile.Repo, env, old, by string) {
	if st, err := p.currentStatus(ctx, inst, cp, old, env); err == nil && st.GetState() == "pending" {
		p.stopWait(env, cp, old)
		why := "superseded by " + short(by)
		_ = p.status(ctx, inst, cp, old, env, "error", why)
		if err := p.endDeployments(ctx, inst, cp, env, old, why); err != nil {
			logger(ctx).Warn().Err(err).Str("environment", env).Str("main", old).Msg("ending a superseded deployment")
		}
	}
}

// currentStatus returns the latest status of the environment's context on a main commit, or nil.
func (p *Promoter) currentStatus(ctx context.Context, inst int64, cp reconcile.Repo, sha, env string) (*github.RepoStatus, error) {
	gh, err := p.clients.Client(ctx, inst)
	if err != nil {
		return nil, err
	}
	combined, _, err := gh.Repositories.GetCombinedStatus(ctx, cp.Owner, cp.Name, sha, &github.ListOptions{PerPage: 100})
	if err != nil {
		return nil, fmt.Errorf("statuses of %s@%s: %w", cp, short(sha), err)
	}
	for _, st := range combined.Statuses {
		if st.GetContext() == StatusContext(env) {
			return st, nil
		}
	}
	return nil, nil
}

func short(sha string) string { return sha[:min(7, len(sha))] }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

func logger(ctx context.Context) *zerolog.Logger { return zerolog.Ctx(ctx) }
