package reconcile

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/render"
)

func TestSecondPullRequestForTheSameBranchIsRecognised(t *testing.T) {
	sim, err := githubsim.New(githubsim.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	require.NoError(t, sim.Start())
	defer sim.Close()
	inst := sim.CreateInstallation("o")
	require.NoError(t, sim.CreateRepo(inst, "o", "g", "main"))
	a, b := "a", "b"
	_, err = sim.CommitFiles("o", "g", "main", map[string]*string{"f": &a}, "base")
	require.NoError(t, err)
	_, err = sim.CommitFiles("o", "g", "kalypso/dev", map[string]*string{"f": &b}, "change")
	require.NoError(t, err)
	token, err := sim.InstallationToken(inst)
	require.NoError(t, err)
	gh, err := github.NewClient(nil).WithAuthToken(token).WithEnterpriseURLs(sim.APIURL(), sim.UploadURL())
	require.NoError(t, err)
	pr := &github.NewPullRequest{Title: github.String("t"), Head: github.String("kalypso/dev"), Base: github.String("main")}
	_, _, err = gh.PullRequests.Create(context.Background(), "o", "g", pr)
	require.NoError(t, err)
	require.False(t, alreadyExists(err))
	_, _, err = gh.PullRequests.Create(context.Background(), "o", "g", pr)
	require.Error(t, err)
	require.True(t, alreadyExists(err), "%v", err)
}

func TestTruncateAndPlanMarkdown(t *testing.T) {
	long := strings.Repeat("line of text\n", 10000)
	cut := truncate(long, 5000)
	require.LessOrEqual(t, len(cut), 5000)
	require.Contains(t, cut, "truncated:")
	require.Equal(t, "short", truncate("short", 5000))

	plan := render.GroupChanges([]render.Change{
		{Path: "large/a/reconciler.yaml", Kind: render.Added}, {Path: "large/a/namespace.yaml", Kind: render.Added},
		{Path: "small/b/namespace.yaml", Kind: render.Removed}, {Path: ".github/tracking/Promoted_Commit_Id", Kind: render.Changed},
	}, "")
	md := PlanMarkdown(plan)
	require.Contains(t, md, "2 files added, 1 changed, 1 removed.")
	require.Contains(t, md, "| large | a | 2 | 0 | 0 |")
	require.Contains(t, md, "| small | b | 0 | 0 | 1 |")
	require.Contains(t, md, "- `.github/tracking/Promoted_Commit_Id` changed")
	require.Equal(t, "No changes.\n", PlanMarkdown(render.GroupChanges(nil, "")))
}
