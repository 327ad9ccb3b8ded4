package ghport_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghfake"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

var repo = envref.Repo{Owner: "o", Name: "cp"}

const sha = "0123456789abcdef0123456789abcdef01234567"

// runs posts n check runs named name on sha, the first with externalID "mine", the others "x".
func runs(t *testing.T, gh *ghfake.GitHub, name string, n int) int64 {
	t.Helper()
	var first int64
	for i := range n {
		id := "x"
		if i == 0 {
			id = "mine"
		}
		run, err := gh.CreateCheckRun(context.Background(), repo, github.CreateCheckRunOptions{Name: name, HeadSHA: sha, ExternalID: github.String(id)})
		require.NoError(t, err)
		if i == 0 {
			first = run.GetID()
		}
	}
	return first
}

// TestFindCheckRunReadsEveryPage checks that the app's check run is found behind more check
// runs of the same name than one page holds.
func TestFindCheckRunReadsEveryPage(t *testing.T) {
	t.Parallel()
	gh := ghfake.New()
	mine := runs(t, gh, "Kalypso / dev", 250)
	runs(t, gh, "Kalypso / stage", 1)
	found, err := ghport.FindCheckRun(context.Background(), gh, repo, sha, "Kalypso / dev", "mine")
	require.NoError(t, err)
	require.NotNil(t, found, "the oldest check run is on the third page")
	require.Equal(t, mine, found.GetID())
	require.Equal(t, 3, gh.Count("CheckRuns"), "pages 1 to 3 of 100")
}

// TestFindCheckRunPastTheLimitNamesTheSetting checks the bound of the check runs read.
func TestFindCheckRunPastTheLimitNamesTheSetting(t *testing.T) {
	t.Parallel()
	gh := ghfake.New()
	gh.Lists.CheckRuns = 120
	runs(t, gh, "Kalypso / dev", 121)
	_, err := ghport.FindCheckRun(context.Background(), gh, repo, sha, "Kalypso / dev", "mine")
	var limit *ghport.LimitError
	require.True(t, errors.As(err, &limit), "%v", err)
	require.Contains(t, err.Error(), `more than 120 check runs named "Kalypso / dev" on o/cp@0123456 (`+ghport.SettingMaxCheckRuns+")")
	require.Equal(t, 2, gh.Count("CheckRuns"))

	gh.Lists.CheckRuns = 121 // exactly the bound is read
	found, err := ghport.FindCheckRun(context.Background(), gh, repo, sha, "Kalypso / dev", "mine")
	require.NoError(t, err)
	require.NotNil(t, found)
}

// TestAllCommentsReadsEveryPage checks that every comment of a pull request is read, oldest
// first, and that more than the bound names the setting.
func TestAllCommentsReadsEveryPage(t *testing.T) {
	t.Parallel()
	gh := ghfake.New()
	for i := range 205 {
		_, err := gh.CreateComment(context.Background(), repo, 7, fmt.Sprintf("c%d", i))
		require.NoError(t, err)
	}
	got, err := ghport.AllComments(context.Background(), gh, repo, 7)
	require.NoError(t, err)
	require.Len(t, got, 205)
	require.Equal(t, "c0", got[0].GetBody())
	require.Equal(t, "c204", got[204].GetBody())

	gh.Lists.Comments = 200
	_, err = ghport.AllComments(context.Background(), gh, repo, 7)
	require.ErrorContains(t, err, "more than 200 comments on o/cp#7 ("+ghport.SettingMaxComments+")")
}

// TestEachDeploymentStopsWhenAsked checks that a search reads no page past the one where it
// ends.
func TestEachDeploymentStopsWhenAsked(t *testing.T) {
	t.Parallel()
	gh := ghfake.New()
	for i := range 350 {
		_, err := gh.CreateDeployment(context.Background(), repo, &github.DeploymentRequest{
			Ref: github.String(fmt.Sprint(i)), Environment: github.String("dev")})
		require.NoError(t, err)
	}
	seen := 0
	err := ghport.EachDeployment(context.Background(), gh, repo, github.DeploymentsListOptions{Environment: "dev"},
		func(d *github.Deployment) (bool, error) {
			seen++
			return d.GetSHA() != "200", nil // newest first: 349, 348, …
		})
	require.NoError(t, err)
	require.Equal(t, 150, seen)
	require.Equal(t, 2, gh.Count("Deployments"))
}
