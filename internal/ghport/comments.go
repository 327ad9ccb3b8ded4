package ghport

import (
	"context"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// Comments implements GitHub: GET /repos/{owner}/{repo}/issues/{issue_number}/comments.
func (c REST) Comments(ctx context.Context, repo envref.Repo, number, page int) ([]*github.IssueComment, int, error) {
	list, resp, err := c.gh.Issues.ListComments(ctx, repo.Owner, repo.Name, number, &github.IssueListCommentsOptions{
		ListOptions: github.ListOptions{Page: page, PerPage: PerPage}})
	if err != nil {
		return nil, 0, classify(err)
	}
	return list, NextPage(resp), nil
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
