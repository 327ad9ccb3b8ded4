package ghfake

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// commentKey is a pull request or issue of a repository.
type commentKey struct {
	Repo   envref.Repo
	Number int
}

// Comments implements ghport.GitHub: one page of ghport.PerPage, oldest first.
func (g *GitHub) Comments(_ context.Context, repo envref.Repo, number, page int) ([]*github.IssueComment, int, error) {
	defer g.mu.Unlock()
	if err := g.enter("Comments", repo, number, page); err != nil {
		return nil, 0, err
	}
	list, next := pageOf(g.comments[commentKey{repo, number}], page, ghport.PerPage)
	out := make([]*github.IssueComment, 0, len(list))
	for _, c := range list {
		cp := *c
		out = append(out, &cp)
	}
	return out, next, nil
}

// CreateComment implements ghport.GitHub.
func (g *GitHub) CreateComment(_ context.Context, repo envref.Repo, number int, body string) (*github.IssueComment, error) {
	defer g.mu.Unlock()
	if err := g.enter("CreateComment", repo, number, body); err != nil {
		return nil, err
	}
	c := &github.IssueComment{ID: github.Int64(g.nextID()), Body: github.String(body),
		User: &github.User{Login: github.String(BotLogin), Type: github.String("Bot")}}
	if g.comments == nil {
		g.comments = map[commentKey][]*github.IssueComment{}
	}
	g.comments[commentKey{repo, number}] = append(g.comments[commentKey{repo, number}], c)
	cp := *c
	return &cp, nil
}

// EditComment implements ghport.GitHub.
func (g *GitHub) EditComment(_ context.Context, repo envref.Repo, id int64, body string) error {
	defer g.mu.Unlock()
	if err := g.enter("EditComment", repo, id, body); err != nil {
		return err
	}
	for key, list := range g.comments {
		for _, c := range list {
			if key.Repo == repo && c.GetID() == id {
				if c.GetUser().GetLogin() != BotLogin {
					return fmt.Errorf("comment %d of %s: 403 Resource not accessible by integration", id, c.GetUser().GetLogin())
				}
				c.Body = github.String(body)
				return nil
			}
		}
	}
	return notFound("comment", id)
}

// CommentsOn returns the bodies of the comments on a pull request or issue, oldest first.
func (g *GitHub) CommentsOn(repo envref.Repo, number int) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, c := range g.comments[commentKey{repo, number}] {
		out = append(out, c.GetBody())
	}
	return out
}

// BotLogin is the login of the App's bot user in the fake: the author of the comments it creates,
// and the only one whose comments it may edit, as on GitHub.
const BotLogin = "kalypso[bot]"

// AddComment adds a comment by someone else to a pull request or issue, as if posted on GitHub:
// a person (type User), or another App's bot when login ends with [bot].
func (g *GitHub) AddComment(repo envref.Repo, number int, login, body string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.comments == nil {
		g.comments = map[commentKey][]*github.IssueComment{}
	}
	kind := "User"
	if strings.HasSuffix(login, "[bot]") {
		kind = "Bot"
	}
	c := &github.IssueComment{ID: github.Int64(g.nextID()), Body: github.String(body), User: &github.User{Login: github.String(login), Type: github.String(kind)}}
	g.comments[commentKey{repo, number}] = append(g.comments[commentKey{repo, number}], c)
}
