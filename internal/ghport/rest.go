package ghport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// REST implements GitHub with a go-github client of one installation: one REST call per
// method, except Repositories and Statuses, which read every page.
type REST struct {
	gh          *github.Client
	maxStatuses int
	limits      Limits
}

var _ GitHub = REST{}

// RESTOption configures a REST adapter.
type RESTOption func(*REST)

// WithMaxStatuses bounds the commit statuses (contexts) Statuses reads on one commit; past it,
// Statuses fails with a LimitError. Default DefaultMaxStatuses.
func WithMaxStatuses(n int) RESTOption { return func(r *REST) { r.maxStatuses = n } }

// WithLimits bounds the lists read page after page (AllCheckRuns, AllComments,
// EachDeployment); zero fields keep their defaults.
func WithLimits(l Limits) RESTOption { return func(r *REST) { r.limits = l } }

// NewREST adapts a go-github client.
func NewREST(gh *github.Client, opts ...RESTOption) REST {
	r := REST{gh: gh, maxStatuses: DefaultMaxStatuses}
	for _, opt := range opts {
		opt(&r)
	}
	r.limits = r.limits.withDefaults()
	return r
}

// Limits implements GitHub.
func (c REST) Limits() Limits { return c.limits.withDefaults() }

// kindError keeps an error's text and makes it also match a sentinel of this package.
type kindError struct{ kind, err error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// classify wraps GitHub's answers that callers decide on with the sentinels of this package.
func classify(err error) error {
	var ge *github.ErrorResponse
	if err == nil || !errors.As(err, &ge) || ge.Response == nil {
		return err
	}
	switch ge.Response.StatusCode {
	case http.StatusNotFound:
		return &kindError{kind: ErrNotFound, err: err}
	case http.StatusUnprocessableEntity:
		// GitHub says so only in the message of its validation error; go-github has no
		// field for it.
		if strings.Contains(ge.Error(), "already exists") {
			return &kindError{kind: ErrPullRequestExists, err: err}
		}
		if strings.Contains(ge.Error(), "No commits between") {
			return &kindError{kind: ErrNoCommits, err: err}
		}
	}
	return err
}

// Repositories implements GitHub: GET /installation/repositories, every page, up to
// Limits().Repositories.
func (c REST) Repositories(ctx context.Context) ([]envref.Repo, error) {
	b := bound{max: c.Limits().Repositories, setting: SettingMaxRepositories, what: "repositories of the installation"}
	return all(b, func(page int) ([]envref.Repo, int, error) {
		list, resp, err := c.gh.Apps.ListRepos(ctx, &github.ListOptions{Page: page, PerPage: PerPage})
		if err != nil {
			return nil, 0, classify(err)
		}
		out := make([]envref.Repo, 0, len(list.Repositories))
		for _, repo := range list.Repositories {
			out = append(out, envref.Repo{Owner: repo.GetOwner().GetLogin(), Name: repo.GetName()})
		}
		return out, NextPage(resp), nil
	})
}

// PullRequest implements GitHub.
func (c REST) PullRequest(ctx context.Context, repo envref.Repo, number int) (*github.PullRequest, error) {
	pr, _, err := c.gh.PullRequests.Get(ctx, repo.Owner, repo.Name, number)
	return pr, classify(err)
}

// OpenPullRequests implements GitHub.
func (c REST) OpenPullRequests(ctx context.Context, repo envref.Repo, head, base string) ([]*github.PullRequest, error) {
	prs, _, err := c.gh.PullRequests.List(ctx, repo.Owner, repo.Name, &github.PullRequestListOptions{
		State: "open", Head: repo.Owner + ":" + head, Base: base})
	return prs, classify(err)
}

// CreatePullRequest implements GitHub.
func (c REST) CreatePullRequest(ctx context.Context, repo envref.Repo, pr *github.NewPullRequest) (*github.PullRequest, error) {
	out, _, err := c.gh.PullRequests.Create(ctx, repo.Owner, repo.Name, pr)
	return out, classify(err)
}

// EditPullRequest implements GitHub.
func (c REST) EditPullRequest(ctx context.Context, repo envref.Repo, number int, pr *github.PullRequest) (*github.PullRequest, error) {
	out, _, err := c.gh.PullRequests.Edit(ctx, repo.Owner, repo.Name, number, pr)
	return out, classify(err)
}

// AddLabels implements GitHub.
func (c REST) AddLabels(ctx context.Context, repo envref.Repo, number int, labels []string) error {
	_, _, err := c.gh.Issues.AddLabelsToIssue(ctx, repo.Owner, repo.Name, number, labels)
	return classify(err)
}

// CheckRuns implements GitHub: GET /repos/{owner}/{repo}/commits/{ref}/check-runs.
func (c REST) CheckRuns(ctx context.Context, repo envref.Repo, sha, name string, page int) ([]*github.CheckRun, int, error) {
	runs, resp, err := c.gh.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Name, sha, &github.ListCheckRunsOptions{
		CheckName: github.String(name), Filter: github.String("all"), ListOptions: github.ListOptions{Page: page, PerPage: PerPage}})
	if err != nil {
		return nil, 0, classify(err)
	}
	return runs.CheckRuns, NextPage(resp), nil
}

// CheckRun implements GitHub.
func (c REST) CheckRun(ctx context.Context, repo envref.Repo, id int64) (*github.CheckRun, error) {
	run, _, err := c.gh.Checks.GetCheckRun(ctx, repo.Owner, repo.Name, id)
	return run, classify(err)
}

// CreateCheckRun implements GitHub.
func (c REST) CreateCheckRun(ctx context.Context, repo envref.Repo, opts github.CreateCheckRunOptions) (*github.CheckRun, error) {
	run, _, err := c.gh.Checks.CreateCheckRun(ctx, repo.Owner, repo.Name, opts)
	return run, classify(err)
}

// UpdateCheckRun implements GitHub.
func (c REST) UpdateCheckRun(ctx context.Context, repo envref.Repo, id int64, opts github.UpdateCheckRunOptions) (*github.CheckRun, error) {
	run, _, err := c.gh.Checks.UpdateCheckRun(ctx, repo.Owner, repo.Name, id, opts)
	return run, classify(err)
}

// completionBody is the body of a check-run update that always sends its actions: go-github
// omits an empty list, and only an empty list removes the buttons.
type completionBody struct {
	Name       string                   `json:"name"`
	Status     string                   `json:"status"`
	Conclusion string                   `json:"conclusion"`
	Output     *github.CheckRunOutput   `json:"output"`
	Actions    []*github.CheckRunAction `json:"actions"`
}

// CompleteCheckRun implements GitHub.
func (c REST) CompleteCheckRun(ctx context.Context, repo envref.Repo, id int64, done Completion) error {
	actions := done.Actions
	if actions == nil {
		actions = []*github.CheckRunAction{}
	}
	body := completionBody{Name: done.Name, Status: "completed", Conclusion: done.Conclusion,
		Output: &github.CheckRunOutput{Title: &done.Title, Summary: &done.Summary}, Actions: actions}
	req, err := c.gh.NewRequest("PATCH", fmt.Sprintf("repos/%s/%s/check-runs/%d", repo.Owner, repo.Name, id), body)
	if err != nil {
		return err
	}
	_, err = c.gh.Do(ctx, req, nil)
	return classify(err)
}

// CreateStatus implements GitHub.
func (c REST) CreateStatus(ctx context.Context, repo envref.Repo, sha string, st *github.RepoStatus) error {
	_, _, err := c.gh.Repositories.CreateStatus(ctx, repo.Owner, repo.Name, sha, st)
	return classify(err)
}

// Deployments implements GitHub: GET /repos/{owner}/{repo}/deployments.
func (c REST) Deployments(ctx context.Context, repo envref.Repo, opts *github.DeploymentsListOptions) ([]*github.Deployment, int, error) {
	list, resp, err := c.gh.Repositories.ListDeployments(ctx, repo.Owner, repo.Name, opts)
	if err != nil {
		return nil, 0, classify(err)
	}
	return list, NextPage(resp), nil
}

// CreateDeployment implements GitHub.
func (c REST) CreateDeployment(ctx context.Context, repo envref.Repo, req *github.DeploymentRequest) (*github.Deployment, error) {
	dep, _, err := c.gh.Repositories.CreateDeployment(ctx, repo.Owner, repo.Name, req)
	return dep, classify(err)
}

// LatestDeploymentStatus implements GitHub.
func (c REST) LatestDeploymentStatus(ctx context.Context, repo envref.Repo, id int64) (*github.DeploymentStatus, error) {
	list, _, err := c.gh.Repositories.ListDeploymentStatuses(ctx, repo.Owner, repo.Name, id, &github.ListOptions{PerPage: 1})
	if err != nil || len(list) == 0 {
		return nil, classify(err)
	}
	return list[0], nil
}

// CreateDeploymentStatus implements GitHub.
func (c REST) CreateDeploymentStatus(ctx context.Context, repo envref.Repo, id int64, req *github.DeploymentStatusRequest) error {
	_, _, err := c.gh.Repositories.CreateDeploymentStatus(ctx, repo.Owner, repo.Name, id, req)
	return classify(err)
}

// Permission implements GitHub.
func (c REST) Permission(ctx context.Context, repo envref.Repo, user string) (string, error) {
	perm, _, err := c.gh.Repositories.GetPermissionLevel(ctx, repo.Owner, repo.Name, user)
	if err != nil {
		return "", classify(err)
	}
	return perm.GetPermission(), nil
}
