package ghfake

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// CreateStatus implements ghport.GitHub.
func (g *GitHub) CreateStatus(_ context.Context, repo envref.Repo, sha string, st *github.RepoStatus) error {
	defer g.mu.Unlock()
	if err := g.enter("CreateStatus", repo, sha, st); err != nil {
		return err
	}
	g.addStatus(repo, sha, st)
	return nil
}

// SetStatus records a commit status as if someone (a cluster) had posted it, without a call.
func (g *GitHub) SetStatus(repo envref.Repo, sha, context, state string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.addStatus(repo, sha, &github.RepoStatus{Context: github.String(context), State: github.String(state)})
}

func (g *GitHub) addStatus(repo envref.Repo, sha string, st *github.RepoStatus) {
	if g.CommitStatuses[repo] == nil {
		g.CommitStatuses[repo] = map[string][]*github.RepoStatus{}
	}
	c := *st
	c.UpdatedAt = &github.Timestamp{Time: g.Now}
	g.CommitStatuses[repo][sha] = append(g.CommitStatuses[repo][sha], &c)
}

// Statuses implements ghport.GitHub: the newest status of each context, up to MaxStatuses
// contexts when it is set.
func (g *GitHub) Statuses(_ context.Context, repo envref.Repo, sha string) ([]*github.RepoStatus, error) {
	defer g.mu.Unlock()
	if err := g.enter("Statuses", repo, sha); err != nil {
		return nil, err
	}
	out := g.latest(repo, sha)
	if g.MaxStatuses > 0 && len(out) > g.MaxStatuses {
		return nil, ghport.StatusLimitError(repo, sha, g.MaxStatuses)
	}
	return out, nil
}

// Latest returns the newest status of each context on a commit, in the order of the contexts'
// first statuses.
func (g *GitHub) Latest(repo envref.Repo, sha string) []*github.RepoStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.latest(repo, sha)
}

func (g *GitHub) latest(repo envref.Repo, sha string) []*github.RepoStatus {
	var out []*github.RepoStatus
	at := map[string]int{}
	for _, st := range g.CommitStatuses[repo][sha] {
		c := *st
		if i, ok := at[st.GetContext()]; ok {
			out[i] = &c
			continue
		}
		at[st.GetContext()] = len(out)
		out = append(out, &c)
	}
	return out
}

// Deployments implements ghport.GitHub: one page of opts.Page and opts.PerPage (30 by default,
// at most 100), newest first.
func (g *GitHub) Deployments(_ context.Context, repo envref.Repo, opts *github.DeploymentsListOptions) ([]*github.Deployment, int, error) {
	defer g.mu.Unlock()
	if opts == nil {
		opts = &github.DeploymentsListOptions{}
	}
	if err := g.enter("Deployments", repo, *opts); err != nil {
		return nil, 0, err
	}
	var all []*github.Deployment
	list := g.DeploymentList[repo]
	for i := len(list) - 1; i >= 0; i-- {
		d := list[i]
		if (opts.SHA == "" || d.GetSHA() == opts.SHA) && (opts.Environment == "" || d.GetEnvironment() == opts.Environment) {
			all = append(all, d)
		}
	}
	out, next := pageOf(all, opts.Page, opts.PerPage)
	return out, next, nil
}

// CreateDeployment implements ghport.GitHub.
func (g *GitHub) CreateDeployment(_ context.Context, repo envref.Repo, req *github.DeploymentRequest) (*github.Deployment, error) {
	defer g.mu.Unlock()
	if err := g.enter("CreateDeployment", repo, req); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(req.Payload)
	if err != nil {
		return nil, fmt.Errorf("deployment payload: %w", err)
	}
	d := &github.Deployment{ID: github.Int64(g.nextID()), SHA: req.Ref, Ref: req.Ref, Environment: req.Environment,
		Description: req.Description, Payload: payload, CreatedAt: &github.Timestamp{Time: g.Now}}
	g.DeploymentList[repo] = append(g.DeploymentList[repo], d)
	return d, nil
}

// LatestDeploymentStatus implements ghport.GitHub.
func (g *GitHub) LatestDeploymentStatus(_ context.Context, repo envref.Repo, id int64) (*github.DeploymentStatus, error) {
	defer g.mu.Unlock()
	if err := g.enter("LatestDeploymentStatus", repo, id); err != nil {
		return nil, err
	}
	list := g.DeploymentHistory[id]
	if len(list) == 0 {
		return nil, nil
	}
	return list[len(list)-1], nil
}

// CreateDeploymentStatus implements ghport.GitHub.
func (g *GitHub) CreateDeploymentStatus(_ context.Context, repo envref.Repo, id int64, req *github.DeploymentStatusRequest) error {
	defer g.mu.Unlock()
	if err := g.enter("CreateDeploymentStatus", repo, id, req); err != nil {
		return err
	}
	g.DeploymentHistory[id] = append(g.DeploymentHistory[id], &github.DeploymentStatus{
		ID: github.Int64(g.nextID()), State: req.State, Description: req.Description, Environment: req.Environment})
	return nil
}

// Permission implements ghport.GitHub.
func (g *GitHub) Permission(_ context.Context, repo envref.Repo, user string) (string, error) {
	defer g.mu.Unlock()
	if err := g.enter("Permission", repo, user); err != nil {
		return "", err
	}
	if level, ok := g.Permissions[user]; ok {
		return level, nil
	}
	return "none", nil
}
