package ghfake

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// Repositories implements ghport.GitHub.
func (g *GitHub) Repositories(context.Context) ([]envref.Repo, error) {
	defer g.mu.Unlock()
	if err := g.enter("Repositories", envref.Repo{}); err != nil {
		return nil, err
	}
	return append([]envref.Repo(nil), g.Repos...), nil
}

// PullRequest implements ghport.GitHub.
func (g *GitHub) PullRequest(_ context.Context, repo envref.Repo, number int) (*github.PullRequest, error) {
	defer g.mu.Unlock()
	if err := g.enter("PullRequest", repo, number); err != nil {
		return nil, err
	}
	pr := g.pull(repo, number)
	if pr == nil {
		return nil, notFound("pull request", number)
	}
	return copyPR(pr), nil
}

// OpenPullRequests implements ghport.GitHub.
func (g *GitHub) OpenPullRequests(_ context.Context, repo envref.Repo, head, base string) ([]*github.PullRequest, error) {
	defer g.mu.Unlock()
	if err := g.enter("OpenPullRequests", repo, head, base); err != nil {
		return nil, err
	}
	var out []*github.PullRequest
	for _, pr := range g.Pulls[repo] {
		if pr.GetState() == "open" && pr.GetHead().GetRef() == head && pr.GetBase().GetRef() == base {
			out = append(out, copyPR(pr))
		}
	}
	return out, nil
}

// CreatePullRequest implements ghport.GitHub.
func (g *GitHub) CreatePullRequest(_ context.Context, repo envref.Repo, pr *github.NewPullRequest) (*github.PullRequest, error) {
	defer g.mu.Unlock()
	if err := g.enter("CreatePullRequest", repo, pr); err != nil {
		return nil, err
	}
	for _, open := range g.Pulls[repo] {
		if open.GetState() == "open" && open.GetHead().GetRef() == pr.GetHead() && open.GetBase().GetRef() == pr.GetBase() {
			return nil, fmt.Errorf("pull request #%d is open for %s: %w", open.GetNumber(), pr.GetHead(), ghport.ErrPullRequestExists)
		}
	}
	created := &github.PullRequest{Number: github.Int(int(g.nextID())), State: github.String("open"),
		Title: github.String(pr.GetTitle()), Body: github.String(pr.GetBody()),
		Head:    &github.PullRequestBranch{Ref: github.String(pr.GetHead())},
		Base:    &github.PullRequestBranch{Ref: github.String(pr.GetBase())},
		HTMLURL: github.String(fmt.Sprintf("https://github.test/%s/pull/%d", repo, g.id))}
	g.Pulls[repo] = append(g.Pulls[repo], created)
	return copyPR(created), nil
}

// EditPullRequest implements ghport.GitHub.
func (g *GitHub) EditPullRequest(_ context.Context, repo envref.Repo, number int, edit *github.PullRequest) (*github.PullRequest, error) {
	defer g.mu.Unlock()
	if err := g.enter("EditPullRequest", repo, number, edit); err != nil {
		return nil, err
	}
	pr := g.pull(repo, number)
	if pr == nil {
		return nil, notFound("pull request", number)
	}
	if edit.Title != nil {
		pr.Title = edit.Title
	}
	if edit.Body != nil {
		pr.Body = edit.Body
	}
	if edit.State != nil {
		pr.State = edit.State
	}
	return copyPR(pr), nil
}

// AddLabels implements ghport.GitHub.
func (g *GitHub) AddLabels(_ context.Context, repo envref.Repo, number int, labels []string) error {
	defer g.mu.Unlock()
	if err := g.enter("AddLabels", repo, number, labels); err != nil {
		return err
	}
	pr := g.pull(repo, number)
	if pr == nil {
		return notFound("issue", number)
	}
	for _, l := range labels {
		pr.Labels = append(pr.Labels, &github.Label{Name: github.String(l)})
	}
	return nil
}

func (g *GitHub) pull(repo envref.Repo, number int) *github.PullRequest {
	for _, pr := range g.Pulls[repo] {
		if pr.GetNumber() == number {
			return pr
		}
	}
	return nil
}

// copyPR copies what callers may change of a pull request.
func copyPR(pr *github.PullRequest) *github.PullRequest {
	c := *pr
	c.Labels = append([]*github.Label(nil), pr.Labels...)
	return &c
}
