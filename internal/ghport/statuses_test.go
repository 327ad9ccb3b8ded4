package ghport

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/githubsim"
)

// simWithStatuses starts a simulated GitHub whose repository o/g has one commit with n
// cluster statuses, and returns an installation client, the simulator and the commit.
func simWithStatuses(t *testing.T, n int) (*github.Client, *githubsim.Server, string) {
	t.Helper()
	sim, err := githubsim.New(githubsim.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	require.NoError(t, sim.Start())
	t.Cleanup(func() { _ = sim.Close() })
	inst := sim.CreateInstallation("o")
	require.NoError(t, sim.CreateRepo(inst, "o", "g", "main"))
	sha, err := sim.CommitFiles("o", "g", "main", map[string]*string{"README.md": github.String("# g\n")}, "seed")
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, sim.PostStatus("o", "g", sha, "success", fmt.Sprintf("kustomization/flux-system/c%04d", i), "ok"))
	}
	token, err := sim.InstallationToken(inst)
	require.NoError(t, err)
	gh, err := github.NewClient(nil).WithAuthToken(token).WithEnterpriseURLs(sim.APIURL(), sim.UploadURL())
	require.NoError(t, err)
	return gh, sim, sha
}

func TestStatusesReadsEveryPage(t *testing.T) {
	gh, sim, sha := simWithStatuses(t, 250)
	got, err := NewREST(gh).Statuses(context.Background(), envref.Repo{Owner: "o", Name: "g"}, sha)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, st := range got {
		seen[st.GetContext()] = true
	}
	require.Len(t, seen, 250, "every context of every page, once")
	require.True(t, seen["kustomization/flux-system/c0249"], "the last page is read")
	require.Equal(t, 3, sim.CallCount("GET /repos/{owner}/{repo}/commits/{ref}/status"), "three pages of 100")
}

func TestStatusesPastTheLimitNameTheSetting(t *testing.T) {
	gh, sim, sha := simWithStatuses(t, 250)
	_, err := NewREST(gh, WithMaxStatuses(200)).Statuses(context.Background(), envref.Repo{Owner: "o", Name: "g"}, sha)
	var limit *LimitError
	require.True(t, errors.As(err, &limit), "%v", err)
	require.Equal(t, 200, limit.Limit)
	require.Contains(t, err.Error(), "more than 200 commit statuses on o/g@"+sha[:7]+" ("+SettingMaxStatuses+")")
	require.Equal(t, 1, sim.CallCount("GET /repos/{owner}/{repo}/commits/{ref}/status"), "total_count says so on the first page")
}

// TestStatusesStopsAtPagesWithoutEnd checks that an answer that keeps offering a next page
// (whatever its count says) is read up to the limit, not forever.
func TestStatusesStopsAtPagesWithoutEnd(t *testing.T) {
	gh, calls := endless(t, `{"state":"pending","total_count":1,"statuses":[{"context":"c","state":"success"}]}`)
	_, err := NewREST(gh, WithMaxStatuses(300)).Statuses(context.Background(), envref.Repo{Owner: "o", Name: "g"}, "abc")
	var limit *LimitError
	require.True(t, errors.As(err, &limit), "%v", err)
	require.Equal(t, 4, *calls, "pages 1 to 4, then the bound")
}
