// Package ghfake is an in-memory GitHub for unit tests of the orchestration layers: it
// implements ghport.GitHub over plain state that tests set and read, records every call, and
// fails the calls a test asks it to.
package ghfake

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// Call is one call made to the fake: the method, the repository and the arguments after it.
type Call struct {
	Method string
	Repo   envref.Repo
	Args   []any
}

// GitHub is the fake. Its exported state may be set before use and read after; while calls
// run, use its methods.
type GitHub struct {
	mu    sync.Mutex
	calls []Call
	fail  map[string][]error // method → errors to return, one per call, then success
	id    int64
	Now   time.Time // the time of created deployments and statuses

	Repos             []envref.Repo
	Pulls             map[envref.Repo][]*github.PullRequest
	Runs              map[envref.Repo][]*github.CheckRun
	Annotations       map[int64][]*github.CheckRunAnnotation // check run → its annotations
	Actions           map[int64][]*github.CheckRunAction     // check run → the buttons it shows
	CommitStatuses    map[envref.Repo]map[string][]*github.RepoStatus
	DeploymentList    map[envref.Repo][]*github.Deployment // newest last
	DeploymentHistory map[int64][]*github.DeploymentStatus // deployment → statuses, newest last
	Permissions       map[string]string                    // user → permission on every repository
	MaxStatuses       int                                  // when set, Statuses fails with a LimitError past it
	Lists             ghport.Limits                        // the bounds of the lists read page after page (zero: defaults)
	Teams             map[string][]string                  // "org/slug" → member logins
	CommitLogins      map[string][]string                  // commit → logins of its author and committer
	comments          map[commentKey][]*github.IssueComment

	// BeforeCall, when set before use, is called at the start of every call with its method,
	// outside the fake's lock: a test makes concurrent calls meet with it.
	BeforeCall func(method string)
}

var _ ghport.GitHub = (*GitHub)(nil)

// New returns an empty fake GitHub.
func New() *GitHub {
	return &GitHub{fail: map[string][]error{}, Now: time.Unix(1_700_000_000, 0).UTC(),
		Pulls: map[envref.Repo][]*github.PullRequest{}, Runs: map[envref.Repo][]*github.CheckRun{},
		Annotations: map[int64][]*github.CheckRunAnnotation{}, Actions: map[int64][]*github.CheckRunAction{},
		CommitStatuses: map[envref.Repo]map[string][]*github.RepoStatus{}, DeploymentList: map[envref.Repo][]*github.Deployment{},
		DeploymentHistory: map[int64][]*github.DeploymentStatus{}, Permissions: map[string]string{},
		Teams: map[string][]string{}, CommitLogins: map[string][]string{}}
}

// Fail makes the next calls of method return errs, one per call, in order.
func (g *GitHub) Fail(method string, errs ...error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fail[method] = append(g.fail[method], errs...)
}

// Calls returns the calls made so far, in order.
func (g *GitHub) Calls() []Call {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Call(nil), g.calls...)
}

// Methods returns the method names of the calls made so far, in order.
func (g *GitHub) Methods() []string {
	var out []string
	for _, c := range g.Calls() {
		out = append(out, c.Method)
	}
	return out
}

// Count returns how many calls of method were made.
func (g *GitHub) Count(method string) int {
	n := 0
	for _, c := range g.Calls() {
		if c.Method == method {
			n++
		}
	}
	return n
}

// Reset forgets the calls made so far.
func (g *GitHub) Reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = nil
}

// enter records a call and returns the error the test asked for, if any; the caller holds
// the lock until it returns (call defer g.mu.Unlock()).
func (g *GitHub) enter(method string, repo envref.Repo, args ...any) error {
	if g.BeforeCall != nil {
		g.BeforeCall(method)
	}
	g.mu.Lock()
	g.calls = append(g.calls, Call{Method: method, Repo: repo, Args: args})
	if errs := g.fail[method]; len(errs) > 0 {
		g.fail[method] = errs[1:]
		return errs[0]
	}
	return nil
}

func (g *GitHub) nextID() int64 { g.id++; return g.id }

// notFound is the fake's 404.
func notFound(what string, id any) error {
	return fmt.Errorf("%s %v: %w", what, id, ghport.ErrNotFound)
}

// Installations serves the fake for every installation, with a fixed git token.
type Installations struct {
	GitHub ghport.GitHub
	Git    string // the token
}

var _ ghport.Installations = Installations{}

// Client implements ghport.Installations.
func (i Installations) Client(context.Context, int64) (ghport.GitHub, error) { return i.GitHub, nil }

// Token implements ghport.Installations.
func (i Installations) Token(context.Context, int64) (string, error) { return i.Git, nil }
