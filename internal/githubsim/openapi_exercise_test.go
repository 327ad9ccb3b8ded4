package githubsim

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

// appClient authenticates as the App with a JWT.
func (f *fixture) appClient(t *testing.T) *github.Client {
	key, err := testKey()
	require.NoError(t, err)
	tr := ghinstallation.NewAppsTransportFromPrivateKey(http.DefaultTransport, f.sim.AppID(), key)
	tr.BaseURL = f.sim.URL() + "/api/v3"
	c, err := github.NewClient(&http.Client{Transport: tr}).WithEnterpriseURLs(f.sim.APIURL(), f.sim.UploadURL())
	require.NoError(t, err)
	return c
}

func exerciseApp(t *testing.T, f *fixture) {
	app := f.appClient(t)
	_, _, err := app.Apps.Get(ctx(), "")
	require.NoError(t, err)
	_, _, err = app.Apps.ListInstallations(ctx(), nil)
	require.NoError(t, err)
	_, _, err = app.Apps.GetInstallation(ctx(), f.inst)
	require.NoError(t, err)
	tok, _, err := app.Apps.CreateInstallationToken(ctx(), f.inst, &github.InstallationTokenOptions{})
	require.NoError(t, err)
	require.Regexp(t, `^ghs_`, tok.GetToken())
	_, _, err = app.Apps.FindRepositoryInstallation(ctx(), testOwner, testRepo)
	require.NoError(t, err)
	_, _, err = app.Apps.FindOrganizationInstallation(ctx(), testOwner)
	require.NoError(t, err)
	_, _, err = app.Apps.FindUserInstallation(ctx(), testOwner)
	require.NoError(t, err)
	repos, _, err := f.tokenClient(tok.GetToken()).Apps.ListRepos(ctx(), nil)
	require.NoError(t, err)
	require.Equal(t, 1, repos.GetTotalCount())
	user := f.sim.UserToken("alice")
	oauthApp := &http.Client{Transport: &github.BasicAuthTransport{Username: f.sim.ClientID(), Password: f.sim.ClientSecret()}}
	c, err := github.NewClient(oauthApp).WithEnterpriseURLs(f.sim.APIURL(), f.sim.UploadURL())
	require.NoError(t, err)
	resp, err := c.Authorizations.Revoke(ctx(), f.sim.ClientID(), user)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.False(t, f.sim.UserTokenValid(user))
}

func exerciseRepoReads(t *testing.T, f *fixture) {
	c := f.client
	_, _, err := c.Repositories.Get(ctx(), testOwner, testRepo)
	require.NoError(t, err)
	_, _, err = c.Repositories.GetBranch(ctx(), testOwner, testRepo, "main", 0)
	require.NoError(t, err)
	file, _, _, err := c.Repositories.GetContents(ctx(), testOwner, testRepo, "README.md", nil)
	require.NoError(t, err)
	_, dir, _, err := c.Repositories.GetContents(ctx(), testOwner, testRepo, "clusters", nil)
	require.NoError(t, err)
	require.Len(t, dir, 1)
	_, _, err = c.Repositories.UpdateFile(ctx(), testOwner, testRepo, "README.md", &github.RepositoryContentFileOptions{
		Message: ptr("docs"), Content: []byte("# gitops v2\n"), SHA: file.SHA,
	})
	require.NoError(t, err)
	_, _, err = c.Repositories.CreateFile(ctx(), testOwner, testRepo, "docs/new.md", &github.RepositoryContentFileOptions{
		Message: ptr("add docs"), Content: []byte("new\n"),
	})
	require.NoError(t, err)
	commits, _, err := c.Repositories.ListCommits(ctx(), testOwner, testRepo, &github.CommitsListOptions{Path: "README.md"})
	require.NoError(t, err)
	require.Len(t, commits, 2)
	_, _, err = c.Repositories.GetCommit(ctx(), testOwner, testRepo, commits[0].GetSHA(), nil)
	require.NoError(t, err)
	cmp, _, err := c.Repositories.CompareCommits(ctx(), testOwner, testRepo, f.seed, "main", nil)
	require.NoError(t, err)
	require.Equal(t, "ahead", cmp.GetStatus())
	_, _, err = c.Repositories.Dispatch(ctx(), testOwner, testRepo, github.DispatchRequestOptions{EventType: "Kustomization/apps.flux-system"})
	require.NoError(t, err)
}

func exerciseGitData(t *testing.T, f *fixture) {
	c := f.client
	ref, _, err := c.Git.GetRef(ctx(), testOwner, testRepo, "heads/main")
	require.NoError(t, err)
	base := ref.GetObject().GetSHA()
	blob, _, err := c.Git.CreateBlob(ctx(), testOwner, testRepo, &github.Blob{Content: ptr("a: 1\n"), Encoding: ptr("utf-8")})
	require.NoError(t, err)
	_, _, err = c.Git.GetBlob(ctx(), testOwner, testRepo, blob.GetSHA())
	require.NoError(t, err)
	parent, _, err := c.Git.GetCommit(ctx(), testOwner, testRepo, base)
	require.NoError(t, err)
	tree, _, err := c.Git.CreateTree(ctx(), testOwner, testRepo, parent.GetTree().GetSHA(), []*github.TreeEntry{
		{Path: ptr("clusters/dev/a.yaml"), Mode: ptr("100644"), Type: ptr("blob"), SHA: blob.SHA},
		{Path: ptr("clusters/dev/app.yaml"), Mode: ptr("100644"), Type: ptr("blob")},
	})
	require.NoError(t, err)
	_, _, err = c.Git.GetTree(ctx(), testOwner, testRepo, tree.GetSHA(), true)
	require.NoError(t, err)
	commit, _, err := c.Git.CreateCommit(ctx(), testOwner, testRepo, &github.Commit{
		Message: ptr("promote"), Tree: tree, Parents: []*github.Commit{{SHA: &base}},
	}, nil)
	require.NoError(t, err)
	_, _, err = c.Git.CreateRef(ctx(), testOwner, testRepo, &github.Reference{Ref: ptr("refs/heads/gitops/dev"), Object: &github.GitObject{SHA: &base}})
	require.NoError(t, err)
	_, _, err = c.Git.UpdateRef(ctx(), testOwner, testRepo, &github.Reference{Ref: ptr("refs/heads/gitops/dev"), Object: &github.GitObject{SHA: commit.SHA}}, false)
	require.NoError(t, err)
	_, _, err = c.Git.ListMatchingRefs(ctx(), testOwner, testRepo, &github.ReferenceListOptions{Ref: "heads/gitops/"})
	require.NoError(t, err)
	_, _, err = c.Git.CreateRef(ctx(), testOwner, testRepo, &github.Reference{Ref: ptr("refs/heads/tmp"), Object: &github.GitObject{SHA: &base}})
	require.NoError(t, err)
	_, err = c.Git.DeleteRef(ctx(), testOwner, testRepo, "heads/tmp")
	require.NoError(t, err)
}

func exercisePulls(t *testing.T, f *fixture) {
	c := f.client
	pr, _, err := c.PullRequests.Create(ctx(), testOwner, testRepo, &github.NewPullRequest{
		Title: ptr("Promote dev"), Head: ptr("gitops/dev"), Base: ptr("main"), Body: ptr("body"),
	})
	require.NoError(t, err)
	n := pr.GetNumber()
	_, _, err = c.PullRequests.List(ctx(), testOwner, testRepo, &github.PullRequestListOptions{Head: testOwner + ":gitops/dev"})
	require.NoError(t, err)
	_, _, err = c.PullRequests.Get(ctx(), testOwner, testRepo, n)
	require.NoError(t, err)
	_, _, err = c.PullRequests.Edit(ctx(), testOwner, testRepo, n, &github.PullRequest{Title: ptr("Promote dev (2)")})
	require.NoError(t, err)
	_, _, err = c.PullRequests.ListFiles(ctx(), testOwner, testRepo, n, nil)
	require.NoError(t, err)
	_, _, err = c.Issues.CreateComment(ctx(), testOwner, testRepo, n, &github.IssueComment{Body: ptr("planned")})
	require.NoError(t, err)
	req, err := c.NewRequest("POST", fmt.Sprintf("repos/%s/%s/issues/%d/labels", testOwner, testRepo, n),
		map[string][]string{"labels": {"promotion"}})
	require.NoError(t, err)
	_, err = c.Do(ctx(), req, nil)
	require.NoError(t, err)
	_, _, err = c.PullRequests.Merge(ctx(), testOwner, testRepo, n, "", &github.PullRequestOptions{SHA: pr.GetHead().GetSHA()})
	require.NoError(t, err)
}

func exerciseChecksAndStatuses(t *testing.T, f *fixture) {
	c := f.client
	sha, err := f.sim.BranchSHA(testOwner, testRepo, "main")
	require.NoError(t, err)
	run, _, err := c.Checks.CreateCheckRun(ctx(), testOwner, testRepo, github.CreateCheckRunOptions{
		Name: "promotion", HeadSHA: sha, Status: ptr("in_progress"), ExternalID: ptr("dev"),
	})
	require.NoError(t, err)
	_, _, err = c.Checks.UpdateCheckRun(ctx(), testOwner, testRepo, run.GetID(), github.UpdateCheckRunOptions{
		Name: "promotion", Conclusion: ptr("success"),
		Output: &github.CheckRunOutput{Title: ptr("done"), Summary: ptr("all good")},
	})
	require.NoError(t, err)
	_, _, err = c.Checks.GetCheckRun(ctx(), testOwner, testRepo, run.GetID())
	require.NoError(t, err)
	_, _, err = c.Checks.ListCheckRunsForRef(ctx(), testOwner, testRepo, "main", nil)
	require.NoError(t, err)
	_, _, err = c.Repositories.CreateStatus(ctx(), testOwner, testRepo, sha, &github.RepoStatus{State: ptr("success"), Context: ptr("kalypso/dev")})
	require.NoError(t, err)
	_, _, err = c.Repositories.GetCombinedStatus(ctx(), testOwner, testRepo, sha, nil)
	require.NoError(t, err)
	for _, cluster := range []string{"kustomization/a", "kustomization/b"} {
		require.NoError(t, f.sim.PostStatus(testOwner, testRepo, sha, "success", cluster, "ok"))
	}
	_, resp, err := c.Repositories.GetCombinedStatus(ctx(), testOwner, testRepo, sha, &github.ListOptions{PerPage: 2, Page: 2})
	require.NoError(t, err)
	require.Equal(t, 1, resp.PrevPage, "a later page of the combined status")
	_, _, err = c.Repositories.ListStatuses(ctx(), testOwner, testRepo, sha, nil)
	require.NoError(t, err)
	id, err := f.sim.PostDeployment(testOwner, testRepo, sha, "dev", "success", "deployed")
	require.NoError(t, err)
	_, _, err = c.Repositories.ListDeployments(ctx(), testOwner, testRepo, &github.DeploymentsListOptions{SHA: sha})
	require.NoError(t, err)
	_, _, err = c.Repositories.ListDeploymentStatuses(ctx(), testOwner, testRepo, id, nil)
	require.NoError(t, err)
}

// exerciseVariants covers error answers and richer bodies of the same operations.
func exerciseVariants(t *testing.T, f *fixture) {
	c := f.client
	status := func(resp *github.Response) int {
		if resp == nil {
			return 0
		}
		return resp.StatusCode
	}
	_, resp, _ := c.Git.GetRef(ctx(), testOwner, testRepo, "heads/missing")
	require.Equal(t, http.StatusNotFound, status(resp))
	main, err := f.sim.BranchSHA(testOwner, testRepo, "main")
	require.NoError(t, err)
	_, resp, _ = c.Git.CreateRef(ctx(), testOwner, testRepo, &github.Reference{Ref: ptr("refs/heads/main"), Object: &github.GitObject{SHA: &main}})
	require.Equal(t, http.StatusUnprocessableEntity, status(resp))
	_, _, resp, _ = c.Repositories.GetContents(ctx(), testOwner, testRepo, "nope.yaml", nil)
	require.Equal(t, http.StatusNotFound, status(resp))
	_, resp, _ = c.PullRequests.Get(ctx(), testOwner, testRepo, 999)
	require.Equal(t, http.StatusNotFound, status(resp))

	_, err = f.sim.CommitFiles(testOwner, testRepo, "feature", map[string]*string{"clusters/dev/app.yaml": ptr("replicas: 2\n")}, "feature")
	require.NoError(t, err)
	_, err = f.sim.CommitFiles(testOwner, testRepo, "main", map[string]*string{"clusters/prod/app.yaml": ptr("replicas: 5\n")}, "prod")
	require.NoError(t, err)
	cmp, _, err := c.Repositories.CompareCommits(ctx(), testOwner, testRepo, "main", "feature", nil)
	require.NoError(t, err)
	require.Equal(t, "diverged", cmp.GetStatus())
	pr, _, err := c.PullRequests.Create(ctx(), testOwner, testRepo, &github.NewPullRequest{Title: ptr("feature"), Head: ptr("feature"), Base: ptr("main")})
	require.NoError(t, err)
	_, resp, _ = c.PullRequests.Create(ctx(), testOwner, testRepo, &github.NewPullRequest{Title: ptr("again"), Head: ptr("feature"), Base: ptr("main")})
	require.Equal(t, http.StatusUnprocessableEntity, status(resp))
	_, resp, _ = c.PullRequests.Merge(ctx(), testOwner, testRepo, pr.GetNumber(), "", &github.PullRequestOptions{SHA: main})
	require.Equal(t, http.StatusConflict, status(resp))
	run, _, err := c.Checks.CreateCheckRun(ctx(), testOwner, testRepo, github.CreateCheckRunOptions{
		Name: "plan", HeadSHA: pr.GetHead().GetSHA(), Conclusion: ptr("action_required"), DetailsURL: ptr("https://example.test/plan"),
		Output: &github.CheckRunOutput{Title: ptr("Plan"), Summary: ptr("1 change"), Text: ptr("details"), Annotations: []*github.CheckRunAnnotation{{
			Path: ptr("clusters/dev/app.yaml"), StartLine: ptr(1), EndLine: ptr(1), AnnotationLevel: ptr("warning"), Message: ptr("replicas changed"),
		}}},
		Actions: []*github.CheckRunAction{{Label: "Promote", Description: "Promote to prod", Identifier: "promote"}},
	})
	require.NoError(t, err)
	_, _, err = c.Checks.GetCheckRun(ctx(), testOwner, testRepo, run.GetID())
	require.NoError(t, err)
	_, _, err = c.Checks.ListCheckRunsForRef(ctx(), testOwner, testRepo, pr.GetHead().GetSHA(), &github.ListCheckRunsOptions{CheckName: ptr("plan"), Filter: ptr("all")})
	require.NoError(t, err)
	merged, _, err := c.PullRequests.Merge(ctx(), testOwner, testRepo, pr.GetNumber(), "", nil)
	require.NoError(t, err)
	require.True(t, merged.GetMerged())
	_, resp, _ = c.PullRequests.Merge(ctx(), testOwner, testRepo, pr.GetNumber(), "", nil)
	require.Equal(t, http.StatusMethodNotAllowed, status(resp))
	got, _, err := c.PullRequests.Get(ctx(), testOwner, testRepo, pr.GetNumber())
	require.NoError(t, err)
	require.Equal(t, merged.GetSHA(), got.GetMergeCommitSHA())
	_, _, err = c.PullRequests.List(ctx(), testOwner, testRepo, &github.PullRequestListOptions{State: "all"})
	require.NoError(t, err)
	_, _, err = c.Git.GetTree(ctx(), testOwner, testRepo, "main", false)
	require.NoError(t, err)
	_, _, err = c.Repositories.GetCombinedStatus(ctx(), testOwner, testRepo, "main", nil)
	require.NoError(t, err)
}
