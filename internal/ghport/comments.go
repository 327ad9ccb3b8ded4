package ghport

import (
	"context"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// Comments implements GitHub.
func (c REST) Comments(ctx context.Context, repo envref.Repo, number int) ([]*github.IssueComment, error) {
	list, _, err := c.gh.Issues.ListComments(ctx, repo.Owner, repo.Name, number, &github.IssueListCommentsOptions{
		ListOptions: github.ListOptions{PerPage: 100}})
	return list, classify(err)
}

// CreateComment implements GitHub.
func (c REST) CreateComment(ctx context.Context, repo envref.Repo, number int, body string) (*github.IssueComment, error) {
	out, _, err := c.gh.Issues.CreateComment(ctx, repo.Owner, repo.Name, number, &github.IssueComment{Body: github.String(body)})
	return out, classify(err)
}

// EditComment implements GitHub.
func (c REST) EditComment(ctx context.Context, repo envref.Repo, id int64, body string) error {
	_, _, err := c.gh.Issues.EditComment(ctx, repo.Owner, repo.Name, id, &github.IssueComment{Body: github.String(body)})
	return classify(err)
}
