package fleetview

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/ellipsis"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/promote"
)

// historyLength is how many promotions per environment the history shows.
const historyLength = 5

// Clients gives installation REST clients (whose responses are cached and revalidated with
// conditional requests).
type Clients interface {
	Client(ctx context.Context, installation int64) (*github.Client, error)
}

// gitopsHead reads the head commit of the environment's GitOps branch: one call. (The ref
// rather than the branch endpoint: go-github reads the branch answer without draining it, so
// the HTTP cache never keeps it and it could not be revalidated.)
func gitopsHead(ctx context.Context, gh *github.Client, repo envref.Repo, branch string) (string, error) {
	ref, _, err := gh.Git.GetRef(ctx, repo.Owner, repo.Name, "heads/"+branch)
	if notFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("branch %s of %s: %w", branch, repo, err)
	}
	return validSHA(ref.GetObject().GetSHA()), nil
}

// appPullRequest finds the app's open pull request of an environment: one call.
func appPullRequest(ctx context.Context, gh *github.Client, repo envref.Repo, env string) (*github.PullRequest, error) {
	list, _, err := gh.PullRequests.List(ctx, repo.Owner, repo.Name, &github.PullRequestListOptions{
		State: "open", Head: repo.Owner + ":" + envref.BranchPrefix + env, ListOptions: github.ListOptions{PerPage: 10}})
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pull requests of %s: %w", repo, err)
	}
	for _, pr := range list {
		if pr.GetHead().GetRef() == envref.BranchPrefix+env {
			return pr, nil
		}
	}
	return nil, nil
}

// envStatus reads the latest kalypso/<env> status of a main commit from its combined status:
// one call a page of 100 contexts, however many statuses other tools posted after it.
func envStatus(ctx context.Context, gh *github.Client, cp envref.Repo, sha, env string) (*github.RepoStatus, error) {
	list, err := ghport.NewREST(gh).Statuses(ctx, cp, sha)
	if errors.Is(err, ghport.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("statuses of %s: %w", short(sha), err)
	}
	for _, st := range list {
		if st.GetContext() == promote.StatusContext(env) {
			return st, nil
		}
	}
	return nil, nil
}

// deployments reads the last promotions to an environment with their latest status: one call,
// and one per deployment shown.
func deployments(ctx context.Context, gh *github.Client, cp envref.Repo, env string) ([]*github.Deployment, map[int64]*github.DeploymentStatus, error) {
	list, _, err := gh.Repositories.ListDeployments(ctx, cp.Owner, cp.Name, &github.DeploymentsListOptions{
		Environment: env, ListOptions: github.ListOptions{PerPage: historyLength}})
	if notFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("deployments of %s to %s: %w", cp, env, err)
	}
	if len(list) > historyLength {
		list = list[:historyLength]
	}
	statuses := map[int64]*github.DeploymentStatus{}
	for _, d := range list {
		st, _, err := gh.Repositories.ListDeploymentStatuses(ctx, cp.Owner, cp.Name, d.GetID(), &github.ListOptions{PerPage: 1})
		if err != nil {
			return nil, nil, fmt.Errorf("statuses of deployment %d: %w", d.GetID(), err)
		}
		if len(st) > 0 {
			statuses[d.GetID()] = st[0]
		}
	}
	return list, statuses, nil
}

// notFound reports a 404 from GitHub.
func notFound(err error) bool {
	var e *github.ErrorResponse
	return errors.As(err, &e) && e.Response != nil && e.Response.StatusCode == http.StatusNotFound
}

var shaPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// validSHA returns sha when it is a full lower-case commit hash, else "".
func validSHA(sha string) string {
	if shaPattern.MatchString(sha) {
		return sha
	}
	return ""
}

// short abbreviates a commit hash.
func short(sha string) string { return sha[:min(7, len(sha))] }

// promotionOf turns the kalypso/<env> status of the pinned commit into a state.
func promotionOf(st *github.RepoStatus) Promotion {
	if st == nil {
		return Promotion{State: StateUnknown}
	}
	desc := ellipsis.Cut(st.GetDescription(), 140)
	got := promote.ReadProgress(st.GetState(), desc)
	p := Promotion{Description: desc, Compliant: got.Compliant, Expected: got.Expected, FailedCluster: got.FailedCluster}
	switch st.GetState() {
	case "pending":
		p.State = StateAwaitingMerge
		if promote.IsWaiting(desc) {
			p.State = StateWaiting
		}
	case "success":
		p.State = StateDeployed
	case "failure":
		p.State = StateFailed
	case "error":
		p.State = StateSuperseded
	default:
		p.State = StateUnknown
	}
	return p
}

// timeOf returns a GitHub timestamp in UTC, or nil.
func timeOf(t *github.Timestamp) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// asError is errors.As, named for the GitHub error checks above.
func asError(err error, target any) bool { return errors.As(err, target) }
