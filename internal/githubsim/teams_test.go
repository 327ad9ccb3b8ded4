package githubsim

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

func TestTeamMembers(t *testing.T) {
	f := newFixture(t)
	f.sim.SetTeam(testOwner, "Release-Managers", []string{"alice", "bob", "carol"})
	members, resp, err := f.client.Teams.ListTeamMembersBySlug(context.Background(), testOwner, "release-managers", &github.TeamListTeamMembersOptions{ListOptions: github.ListOptions{PerPage: 2}})
	require.NoError(t, err)
	require.Equal(t, 2, resp.NextPage, "paginated")
	require.Equal(t, "alice", members[0].GetLogin())
	require.Equal(t, "User", members[1].GetType())
	_, resp, err = f.client.Teams.ListTeamMembersBySlug(context.Background(), testOwner, "nobody", nil)
	require.Error(t, err)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}
