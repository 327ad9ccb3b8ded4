package githubsim

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

func (f *fixture) branch(t *testing.T, name string, files map[string]*string) string {
	t.Helper()
	sha, err := f.sim.CommitFiles(testOwner, testRepo, name, files, "change on "+name)
	require.NoError(t, err)
	return sha
}

func (f *fixture) openPull(t *testing.T, head string) *github.PullRequest {
	t.Helper()
	pr, _, err := f.client.PullRequests.Create(ctx(), testOwner, testRepo, &github.NewPullRequest{Title: ptr("Promote " + head), Head: ptr(head), Base: ptr("main")})
	require.NoError(t, err)
	return pr
}

func TestCreatePullValidation(t *testing.T) {
	f := newFixture(t)
	f.branch(t, "gitops/dev", map[string]*string{"clusters/dev/app.yaml": ptr("replicas: 2\n")})
	_, err := f.sim.CommitFiles(testOwner, testRepo, "empty", map[string]*string{}, "nothing")
	require.NoError(t, err)
	f.openPull(t, "gitops/dev")
	tests := []struct {
		name, head, base, message string
	}{
		{"duplicate", testOwner + ":gitops/dev", "main", "A pull request already exists for contoso:gitops/dev."},
		{"no commits", "main", "main", "No commits between main and main"},
		{"missing head", "nope", "main", "head branch nope does not exist"},
		{"missing base", "gitops/dev", "nope", "base branch nope does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, resp, err := f.client.PullRequests.Create(ctx(), testOwner, testRepo, &github.NewPullRequest{Title: ptr("x"), Head: &tt.head, Base: &tt.base})
			require.Error(t, err)
			require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
			require.Contains(t, err.Error(), tt.message)
		})
	}
}

func TestListPullsFilters(t *testing.T) {
	f := newFixture(t)
	f.branch(t, "a", map[string]*string{"a": ptr("a")})
	f.branch(t, "b", map[string]*string{"b": ptr("b")})
	pa, pb := f.openPull(t, "a"), f.openPull(t, "b")
	require.NoError(t, f.sim.ClosePR(testOwner, testRepo, pb.GetNumber(), "octocat"))
	tests := []struct {
		name string
		opts github.PullRequestListOptions
		want []int
	}{
		{"open by default", github.PullRequestListOptions{}, []int{pa.GetNumber()}},
		{"all, newest first", github.PullRequestListOptions{State: "all"}, []int{pb.GetNumber(), pa.GetNumber()}},
		{"closed", github.PullRequestListOptions{State: "closed"}, []int{pb.GetNumber()}},
		{"by head", github.PullRequestListOptions{State: "all", Head: testOwner + ":b"}, []int{pb.GetNumber()}},
		{"by base", github.PullRequestListOptions{State: "all", Base: "other"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, _, err := f.client.PullRequests.List(ctx(), testOwner, testRepo, &tt.opts)
			require.NoError(t, err)
			var got []int
			for _, p := range list {
				got = append(got, p.GetNumber())
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestPullLifecycleWebhooks(t *testing.T) {
	f := newFixture(t)
	f.branch(t, "gitops/dev", map[string]*string{"clusters/dev/app.yaml": ptr("replicas: 2\n")})
	pr := f.openPull(t, "gitops/dev")
	n := pr.GetNumber()
	_, _, err := f.client.PullRequests.Edit(ctx(), testOwner, testRepo, n, &github.PullRequest{Title: ptr("Renamed")})
	require.NoError(t, err)
	_, _, err = f.client.Issues.AddLabelsToIssue(ctx(), testOwner, testRepo, n, []string{"promotion", "dev"})
	require.NoError(t, err)
	_, _, err = f.client.Issues.CreateComment(ctx(), testOwner, testRepo, n, &github.IssueComment{Body: ptr("<!-- kalypso --> plan")})
	require.NoError(t, err)
	_, _, err = f.client.PullRequests.Edit(ctx(), testOwner, testRepo, n, &github.PullRequest{State: ptr("closed")})
	require.NoError(t, err)
	require.NoError(t, f.sim.ReopenPR(testOwner, testRepo, n, "octocat"))
	f.branch(t, "gitops/dev", map[string]*string{"clusters/dev/more.yaml": ptr("x")})
	_, err = f.client.Git.DeleteRef(ctx(), testOwner, testRepo, "heads/gitops/dev")
	require.NoError(t, err)
	require.Equal(t, []string{
		"push.", "pull_request.opened", "pull_request.edited", "pull_request.closed", "pull_request.reopened",
		"push.", "pull_request.synchronize", "push.", "pull_request.closed",
	}, f.hooks.events())
	got, _, err := f.client.PullRequests.Get(ctx(), testOwner, testRepo, n)
	require.NoError(t, err)
	require.Equal(t, "Renamed", got.GetTitle())
	require.Len(t, got.Labels, 2)
	require.Equal(t, 1, got.GetComments())
	require.Equal(t, "closed", got.GetState())
	require.Len(t, f.sim.Comments(testOwner, testRepo, n), 1)
}

func TestMergeMethods(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		parents int
	}{
		{"merge commit", "merge", 2},
		{"squash", "squash", 1},
		{"rebase", "rebase", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.branch(t, "feature", map[string]*string{"clusters/dev/app.yaml": ptr("replicas: 2\n")})
			f.branch(t, "main", map[string]*string{"clusters/prod/app.yaml": ptr("replicas: 4\n")})
			pr := f.openPull(t, "feature")
			res, _, err := f.client.PullRequests.Merge(ctx(), testOwner, testRepo, pr.GetNumber(), "", &github.PullRequestOptions{MergeMethod: tt.method})
			require.NoError(t, err)
			c, _, err := f.client.Git.GetCommit(ctx(), testOwner, testRepo, res.GetSHA())
			require.NoError(t, err)
			require.Len(t, c.Parents, tt.parents)
			tree, err := f.sim.Tree(testOwner, testRepo, "main")
			require.NoError(t, err)
			require.Equal(t, "replicas: 2\n", tree["clusters/dev/app.yaml"])
			require.Equal(t, "replicas: 4\n", tree["clusters/prod/app.yaml"])
		})
	}
}

func TestMergeLineLevelAndConflict(t *testing.T) {
	f := newFixture(t)
	lines := func(a, b string) *string { return ptr("first: " + a + "\nmiddle: x\nlast: " + b + "\n") }
	f.branch(t, "main", map[string]*string{"cfg.yaml": lines("1", "1")})
	f.branch(t, "left", map[string]*string{"cfg.yaml": lines("2", "1")})
	f.branch(t, "right", map[string]*string{"cfg.yaml": lines("1", "2")})
	f.branch(t, "clash", map[string]*string{"cfg.yaml": lines("3", "1")})
	left, right, clash := f.openPull(t, "left"), f.openPull(t, "right"), f.openPull(t, "clash")
	_, err := f.sim.MergePR(testOwner, testRepo, left.GetNumber(), "octocat")
	require.NoError(t, err)
	got, _, err := f.client.PullRequests.Get(ctx(), testOwner, testRepo, right.GetNumber())
	require.NoError(t, err)
	require.True(t, got.GetMergeable())
	_, err = f.sim.MergePR(testOwner, testRepo, right.GetNumber(), "octocat")
	require.NoError(t, err)
	content, err := f.sim.ReadFile(testOwner, testRepo, "main", "cfg.yaml")
	require.NoError(t, err)
	require.Equal(t, *lines("2", "2"), content)

	got, _, err = f.client.PullRequests.Get(ctx(), testOwner, testRepo, clash.GetNumber())
	require.NoError(t, err)
	require.False(t, got.GetMergeable())
	require.Equal(t, "dirty", got.GetMergeableState())
	_, resp, err := f.client.PullRequests.Merge(ctx(), testOwner, testRepo, clash.GetNumber(), "", nil)
	require.Error(t, err)
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	content, err = f.sim.ReadFile(testOwner, testRepo, "main", "cfg.yaml")
	require.NoError(t, err)
	require.Equal(t, *lines("2", "2"), content, "a refused merge changes nothing")
}

func TestBaseContainingHeadMarksMerged(t *testing.T) {
	f := newFixture(t)
	head := f.branch(t, "gitops/dev", map[string]*string{"x": ptr("x")})
	pr := f.openPull(t, "gitops/dev")
	_, _, err := f.client.Git.UpdateRef(ctx(), testOwner, testRepo, &github.Reference{Ref: ptr("heads/main"), Object: &github.GitObject{SHA: &head}}, false)
	require.NoError(t, err)
	ev := last[*github.PullRequestEvent](t, f.hooks)
	require.Equal(t, "closed", ev.GetAction())
	require.True(t, ev.GetPullRequest().GetMerged())
	got := f.sim.PullRequests(testOwner, testRepo)
	require.Len(t, got, 1)
	require.Equal(t, pr.GetNumber(), got[0].GetNumber())
	require.True(t, got[0].GetMerged())
	require.Equal(t, head, got[0].GetMergeCommitSHA())
}

func TestPullFilesAndCompare(t *testing.T) {
	f := newFixture(t)
	f.branch(t, "gitops/dev", map[string]*string{"clusters/dev/app.yaml": ptr("replicas: 2\n"), "clusters/prod/values.yaml": nil, "new.yaml": ptr("a\nb\n")})
	f.branch(t, "main", map[string]*string{"unrelated.txt": ptr("u")})
	pr := f.openPull(t, "gitops/dev")
	files, _, err := f.client.PullRequests.ListFiles(ctx(), testOwner, testRepo, pr.GetNumber(), nil)
	require.NoError(t, err)
	var got []string
	for _, fl := range files {
		got = append(got, fl.GetStatus()+" "+fl.GetFilename())
	}
	require.Equal(t, []string{"modified clusters/dev/app.yaml", "removed clusters/prod/values.yaml", "added new.yaml"}, got)
	tests := []struct {
		base, head, status string
		ahead, behind      int
	}{
		{"main", "gitops/dev", "diverged", 1, 1},
		{f.seed, "main", "ahead", 1, 0},
		{"main", f.seed, "behind", 0, 1},
		{"main", "main", "identical", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.status, func(t *testing.T) {
			cmp, _, err := f.client.Repositories.CompareCommits(ctx(), testOwner, testRepo, tt.base, tt.head, nil)
			require.NoError(t, err)
			require.Equal(t, tt.status, cmp.GetStatus())
			require.Equal(t, tt.ahead, cmp.GetAheadBy())
			require.Equal(t, tt.behind, cmp.GetBehindBy())
		})
	}
	require.True(t, strings.HasPrefix(pr.GetHead().GetLabel(), testOwner+":"))
}

// Only a comment's author can edit it (an App editing another App's comment gets 403), and a
// pull request's author_association follows the author's permission on the repository.
func TestCommentsBelongToTheirAuthor(t *testing.T) {
	f := newFixture(t)
	f.branch(t, "feature", map[string]*string{"a": ptr("a")})
	n := f.openPull(t, "feature").GetNumber()
	require.NoError(t, f.sim.PostComment(testOwner, testRepo, n, "other-app[bot]", "<!-- kalypso-preview --> look-alike"))
	mine, _, err := f.client.Issues.CreateComment(ctx(), testOwner, testRepo, n, &github.IssueComment{Body: ptr("mine")})
	require.NoError(t, err)
	comments := f.sim.Comments(testOwner, testRepo, n)
	require.Len(t, comments, 2)
	require.Equal(t, "Bot", comments[0].GetUser().GetType())
	_, resp, err := f.client.Issues.EditComment(ctx(), testOwner, testRepo, comments[0].GetID(), &github.IssueComment{Body: ptr("taken")})
	require.Error(t, err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	_, _, err = f.client.Issues.EditComment(ctx(), testOwner, testRepo, mine.GetID(), &github.IssueComment{Body: ptr("edited")})
	require.NoError(t, err)
	require.Equal(t, "<!-- kalypso-preview --> look-alike", f.sim.Comments(testOwner, testRepo, n)[0].GetBody())
	require.Error(t, f.sim.PostComment(testOwner, testRepo, n+1, "x", "no such pull request"))

	association := func(user string) string {
		_, err := f.sim.CommitFiles(testOwner, testRepo, "release-"+user, map[string]*string{"r": ptr(user)}, "base")
		require.NoError(t, err)
		number, err := f.sim.OpenPR(testOwner, testRepo, "feature", "release-"+user, "t", "", user)
		require.NoError(t, err)
		pr, _, err := f.client.PullRequests.Get(ctx(), testOwner, testRepo, number)
		require.NoError(t, err)
		return pr.GetAuthorAssociation()
	}
	require.NoError(t, f.sim.SetPermission(testOwner, testRepo, "reader", "read"))
	require.NoError(t, f.sim.SetPermission(testOwner, testRepo, "gone", "none"))
	require.Equal(t, "COLLABORATOR", association("reader"))
	require.Equal(t, "NONE", association("gone"))
	require.Equal(t, "NONE", association("stranger"))
	require.Equal(t, "OWNER", association(testOwner))
}
