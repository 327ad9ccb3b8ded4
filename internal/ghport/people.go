package ghport

import (
	"context"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// People is what the approval of a promotion reads about users: the members of a team and the
// GitHub users behind a commit.
type People interface {
	// TeamMembers returns the logins of the members of a team of an organisation (every page),
	// ErrNotFound when the team does not exist or is not visible to the installation.
	TeamMembers(ctx context.Context, org, slug string) ([]string, error)
	// CommitUsers returns the logins GitHub associates with a commit's author and committer
	// (none for an e-mail address GitHub does not know).
	CommitUsers(ctx context.Context, repo envref.Repo, sha string) ([]string, error)
}

// TeamMembers implements People: GET /orgs/{org}/teams/{team_slug}/members.
func (c REST) TeamMembers(ctx context.Context, org, slug string) ([]string, error) {
	var out []string
	opts := &github.TeamListTeamMembersOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		list, resp, err := c.gh.Teams.ListTeamMembersBySlug(ctx, org, slug, opts)
		if err != nil {
			return nil, classify(err)
		}
		for _, u := range list {
			out = append(out, u.GetLogin())
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// CommitUsers implements People: GET /repos/{owner}/{repo}/commits/{ref}.
func (c REST) CommitUsers(ctx context.Context, repo envref.Repo, sha string) ([]string, error) {
	commit, _, err := c.gh.Repositories.GetCommit(ctx, repo.Owner, repo.Name, sha, nil)
	if err != nil {
		return nil, classify(err)
	}
	var out []string
	for _, u := range []*github.User{commit.GetAuthor(), commit.GetCommitter()} {
		if login := u.GetLogin(); login != "" {
			out = append(out, login)
		}
	}
	return out, nil
}
