package ghport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// TestEachStopsAtPagesWithoutEnd checks that a list whose pages keep offering a next page,
// empty or not, is read up to its bound and no further.
func TestEachStopsAtPagesWithoutEnd(t *testing.T) {
	for name, size := range map[string]int{"one item a page": 1, "full pages": PerPage} {
		t.Run(name, func(t *testing.T) {
			calls := 0
			read := func(page int) ([]int, int, error) {
				calls++
				return make([]int, size), page + 1, nil
			}
			_, err := all(bound{max: 300, what: "things", setting: "x.max"}, read)
			var limit *LimitError
			require.True(t, errors.As(err, &limit), "%v", err)
			require.Equal(t, "more than 300 things (x.max)", err.Error())
			require.LessOrEqual(t, calls, 4, "at most the pages the bound holds, and one more")
		})
	}
}

// TestRESTListsFollowNextPages checks the go-github adapter against the simulated GitHub's
// Link headers: the check runs, deployments and comments past the first page are read.
func TestRESTListsFollowNextPages(t *testing.T) {
	gh, sim, sha := simWithStatuses(t, 0)
	ctx := context.Background()
	repo := envref.Repo{Owner: "o", Name: "g"}
	for i := range 120 {
		_, _, err := gh.Checks.CreateCheckRun(ctx, "o", "g", github.CreateCheckRunOptions{Name: "Kalypso / dev", HeadSHA: sha,
			ExternalID: github.String(fmt.Sprint(i))})
		require.NoError(t, err)
		_, _, err = gh.Repositories.CreateDeployment(ctx, "o", "g", &github.DeploymentRequest{Ref: github.String(sha),
			Environment: github.String("dev"), RequiredContexts: &[]string{}})
		require.NoError(t, err)
	}
	rest := NewREST(gh)
	found, err := FindCheckRun(ctx, rest, repo, sha, "Kalypso / dev", "0")
	require.NoError(t, err)
	require.NotNil(t, found, "the first check run is on the second page")
	require.Equal(t, 2, sim.CallCount("GET /repos/{owner}/{repo}/commits/{ref}/check-runs"))

	n := 0
	require.NoError(t, EachDeployment(ctx, rest, repo, github.DeploymentsListOptions{SHA: sha, Environment: "dev"},
		func(*github.Deployment) (bool, error) { n++; return true, nil }))
	require.Equal(t, 120, n)

	_, err = FindCheckRun(ctx, NewREST(gh, WithLimits(Limits{CheckRuns: 100})), repo, sha, "Kalypso / dev", "0")
	require.ErrorContains(t, err, "("+SettingMaxCheckRuns+")")
}

// endless serves a list whose every page holds one item (body) and offers a next page, and
// counts the requests.
func endless(t *testing.T, body string) (*github.Client, *int) {
	t.Helper()
	calls := 0
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?page=%d&per_page=100>; rel="next"`, srv.URL, r.URL.Path, calls+1))
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	gh, err := github.NewClient(srv.Client()).WithEnterpriseURLs(srv.URL+"/", srv.URL+"/")
	require.NoError(t, err)
	return gh, &calls
}

// TestRepositoriesAndTeamMembersAreBounded checks the two lists the adapter reads whole.
func TestRepositoriesAndTeamMembersAreBounded(t *testing.T) {
	gh, calls := endless(t, `{"total_count":1,"repositories":[{"name":"r","owner":{"login":"o"}}]}`)
	_, err := NewREST(gh, WithLimits(Limits{Repositories: 250})).Repositories(context.Background())
	require.ErrorContains(t, err, "more than 250 repositories of the installation ("+SettingMaxRepositories+")")
	require.Equal(t, 3, *calls, "the pages the bound holds, then no more")

	gh, calls = endless(t, `[{"login":"u"}]`)
	_, err = NewREST(gh).TeamMembers(context.Background(), "org", "team")
	var limit *LimitError
	require.True(t, errors.As(err, &limit), "%v", err)
	require.Equal(t, MaxTeamMembers, limit.Limit)
	require.Contains(t, err.Error(), "members of team org/team")
	require.Equal(t, MaxTeamMembers/PerPage+1, *calls)
}
