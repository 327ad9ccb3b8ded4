// Package ghport is the narrow seam between the orchestration layers (reconcile, promote,
// handlers) and GitHub's REST API: the few calls they make, as one interface. REST adapts a
// go-github client to it; internal/ghfake implements it in memory for unit tests.
package ghport

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// Errors a GitHub implementation returns, wrapped, so that callers decide with errors.Is.
var (
	// ErrNotFound: the resource does not exist (HTTP 404).
	ErrNotFound = errors.New("not found")
	// ErrPullRequestExists: a pull request for the same head and base is already open.
	ErrPullRequestExists = errors.New("a pull request already exists")
	// ErrNoCommits: a pull request cannot be opened because its head has no commit its base
	// lacks (the base moved, e.g. a merge, since the head was read).
	ErrNoCommits = errors.New("no commits between base and head")
)

// GitHub is what orchestration asks of GitHub, for one installation. The lists CheckRuns,
// Comments and Deployments return one page, as GitHub does, and the number of the next page (0
// after the last); AllCheckRuns, AllComments and EachDeployment read them page after page, up
// to the bounds Limits gives. Repositories and Statuses read every page themselves (Statuses up
// to a bound): the app keeps what it reads bounded.
type GitHub interface {
	// Limits returns the bounds of the lists read page after page.
	Limits() Limits

	// Repositories lists every repository the installation can see; more than
	// Limits().Repositories is a *LimitError.
	Repositories(ctx context.Context) ([]envref.Repo, error)

	// PullRequest reads a pull request as GitHub has it now; ErrNotFound when there is none.
	PullRequest(ctx context.Context, repo envref.Repo, number int) (*github.PullRequest, error)
	// OpenPullRequests lists the open pull requests of repo from branch head of repo into base:
	// one page, which holds them all (GitHub keeps one open pull request per head and base).
	OpenPullRequests(ctx context.Context, repo envref.Repo, head, base string) ([]*github.PullRequest, error)
	// CreatePullRequest opens a pull request; ErrPullRequestExists when one is open already.
	CreatePullRequest(ctx context.Context, repo envref.Repo, pr *github.NewPullRequest) (*github.PullRequest, error)
	// EditPullRequest changes a pull request's title, body or state; ErrNotFound when it is gone.
	EditPullRequest(ctx context.Context, repo envref.Repo, number int, pr *github.PullRequest) (*github.PullRequest, error)
	// AddLabels adds labels to a pull request or issue.
	AddLabels(ctx context.Context, repo envref.Repo, number int, labels []string) error
	// Comments lists one page (of PerPage) of the comments of a pull request or issue, oldest
	// first, and the number of the next page (0 after the last).
	Comments(ctx context.Context, repo envref.Repo, number, page int) ([]*github.IssueComment, int, error)
	// CreateComment comments on a pull request or issue.
	CreateComment(ctx context.Context, repo envref.Repo, number int, body string) (*github.IssueComment, error)
	// EditComment replaces a comment's body; ErrNotFound when it is gone.
	EditComment(ctx context.Context, repo envref.Repo, id int64, body string) error

	// CheckRuns lists one page (of PerPage) of the check runs named name on a commit, of every
	// check suite, and the number of the next page (0 after the last).
	CheckRuns(ctx context.Context, repo envref.Repo, sha, name string, page int) ([]*github.CheckRun, int, error)
	// CheckRun reads a check run as GitHub has it now.
	CheckRun(ctx context.Context, repo envref.Repo, id int64) (*github.CheckRun, error)
	// CreateCheckRun posts a check run.
	CreateCheckRun(ctx context.Context, repo envref.Repo, opts github.CreateCheckRunOptions) (*github.CheckRun, error)
	// UpdateCheckRun updates a check run; annotations in opts are appended to its own.
	UpdateCheckRun(ctx context.Context, repo envref.Repo, id int64, opts github.UpdateCheckRunOptions) (*github.CheckRun, error)
	// CompleteCheckRun completes a check run with exactly the given buttons: an empty list
	// removes the ones it shows.
	CompleteCheckRun(ctx context.Context, repo envref.Repo, id int64, c Completion) error

	// CreateStatus posts a commit status.
	CreateStatus(ctx context.Context, repo envref.Repo, sha string, st *github.RepoStatus) error
	// Statuses returns the latest status of each context on a commit, every page of them; a
	// commit with more contexts than the implementation's bound is a *LimitError.
	Statuses(ctx context.Context, repo envref.Repo, sha string) ([]*github.RepoStatus, error)

	// Deployments lists one page (opts.Page, of opts.PerPage) of the deployments opts selects,
	// newest first, and the number of the next page (0 after the last).
	Deployments(ctx context.Context, repo envref.Repo, opts *github.DeploymentsListOptions) ([]*github.Deployment, int, error)
	// CreateDeployment creates a deployment.
	CreateDeployment(ctx context.Context, repo envref.Repo, req *github.DeploymentRequest) (*github.Deployment, error)
	// LatestDeploymentStatus returns the newest status of a deployment, nil when it has none.
	LatestDeploymentStatus(ctx context.Context, repo envref.Repo, id int64) (*github.DeploymentStatus, error)
	// CreateDeploymentStatus posts a deployment status.
	CreateDeploymentStatus(ctx context.Context, repo envref.Repo, id int64, req *github.DeploymentStatusRequest) error

	// Permission returns a user's permission on a repository: admin, maintain, write, triage, read or none.
	Permission(ctx context.Context, repo envref.Repo, user string) (string, error)

	People
}

// Completion is the final state of a check run and the buttons it keeps.
type Completion struct {
	Name, Conclusion, Title, Summary string
	Actions                          []*github.CheckRunAction // nil or empty: no button
}

// Installations gives what orchestration needs from an installation: GitHub and a git token.
type Installations interface {
	Client(ctx context.Context, installation int64) (GitHub, error)
	Token(ctx context.Context, installation int64) (string, error)
}

// FindCheckRun returns the newest check run named name with externalID on a commit, or nil;
// it reads every page of the commit's check runs of that name (AllCheckRuns).
func FindCheckRun(ctx context.Context, gh GitHub, repo envref.Repo, sha, name, externalID string) (*github.CheckRun, error) {
	runs, err := AllCheckRuns(ctx, gh, repo, sha, name)
	if err != nil {
		return nil, fmt.Errorf("check runs of %s@%s: %w", repo, sha, err)
	}
	var found *github.CheckRun
	for _, run := range runs {
		if run.GetName() == name && run.GetExternalID() == externalID && (found == nil || run.GetID() > found.GetID()) {
			found = run
		}
	}
	return found, nil
}

// CanWrite reports whether a permission level (as Permission returns it) allows writing.
func CanWrite(level string) bool {
	return level == "admin" || level == "maintain" || level == "write"
}
