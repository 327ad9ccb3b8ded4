package ghfake

import (
	"context"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// TeamMembers implements ghport.People from Teams ("org/slug" → logins).
func (g *GitHub) TeamMembers(_ context.Context, org, slug string) ([]string, error) {
	defer g.mu.Unlock()
	if err := g.enter("TeamMembers", envref.Repo{Owner: org}, slug); err != nil {
		return nil, err
	}
	members, ok := g.Teams[org+"/"+slug]
	if !ok {
		return nil, notFound("team", org+"/"+slug)
	}
	return append([]string(nil), members...), nil
}

// CommitUsers implements ghport.People from CommitLogins (sha → logins).
func (g *GitHub) CommitUsers(_ context.Context, repo envref.Repo, sha string) ([]string, error) {
	defer g.mu.Unlock()
	if err := g.enter("CommitUsers", repo, sha); err != nil {
		return nil, err
	}
	return append([]string(nil), g.CommitLogins[sha]...), nil
}
