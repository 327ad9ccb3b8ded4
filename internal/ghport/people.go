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

// MaxTeamMembers bounds the members of one team read to count its approvals.
const MaxTeamMembers = 10_000

// TeamMembers implements People: GET /orgs/{org}/teams/{team_slug}/members, every page, up to
// MaxTeamMembers (a *LimitError past it).
func (c REST) TeamMembers(ctx context.Context, org, slug string) ([]string, error) {
	b := bound{max: MaxTeamMembers, setting: "a fixed limit", what: "members of team " + org + "/" + slug}
	return all(b, func(page int) ([]string, int, error) {
		list, resp, err := c.gh.Teams.ListTeamMembersBySlug(ctx, org, slug, &github.TeamListTeamMembersOptions{
			ListOptions: github.ListOptions{Page: page, PerPage: PerPage}})
		if err != nil {
			return nil, 0, classify(err)
		}
		out := make([]string, 0, len(list))
		for _, u := range list {
			out = append(out, u.GetLogin())
		}
		return out, NextPage(resp), nil
	})
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
