package githubsim

import (
	"net/http"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

// TestEndToEnd drives the simulator the way the App does: ghinstallation
// tokens, go-git over smart HTTP, pull requests, checks, statuses,
// webhooks, faults and redelivery.
func TestEndToEnd(t *testing.T) {
	f := newFixture(t)
	key, err := testKey()
	require.NoError(t, err)
	itr := ghinstallation.NewFromAppsTransport(ghinstallation.NewAppsTransportFromPrivateKey(http.DefaultTransport, f.sim.AppID(), key), f.inst)
	itr.BaseURL = f.sim.URL() + "/api/v3"
	gh, err := github.NewClient(&http.Client{Transport: itr}).WithEnterpriseURLs(f.sim.APIURL(), f.sim.UploadURL())
	require.NoError(t, err)
	token, err := itr.Token(ctx())
	require.NoError(t, err)
	auth := &githttp.BasicAuth{Username: "x-access-token", Password: token}

	// Clone, commit on a new branch and push over smart HTTP.
	fs := memfs.New()
	local, err := git.Clone(memory.NewStorage(), fs, &git.CloneOptions{URL: f.sim.GitURL(testOwner, testRepo), Auth: auth})
	require.NoError(t, err)
	wt, err := local.Worktree()
	require.NoError(t, err)
	require.NoError(t, wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("gitops/dev"), Create: true}))
	commitLocal(t, wt, fs, "clusters/dev/app.yaml", "replicas: 2\n")
	push(t, local, auth, "refs/heads/gitops/dev:refs/heads/gitops/dev")
	pushEv := last[*github.PushEvent](t, f.hooks)
	require.Equal(t, "refs/heads/gitops/dev", pushEv.GetRef())
	require.True(t, pushEv.GetCreated())
	require.Equal(t, f.inst, pushEv.GetInstallation().GetID())
	require.Len(t, pushEv.Commits, 1)
	require.Equal(t, []string{"clusters/dev/app.yaml"}, pushEv.Commits[0].Modified)

	// Open a pull request through REST, then push again: synchronize.
	pr, _, err := gh.PullRequests.Create(ctx(), testOwner, testRepo, &github.NewPullRequest{
		Title: ptr("Promote to dev"), Head: ptr("gitops/dev"), Base: ptr("main"),
	})
	require.NoError(t, err)
	require.Equal(t, "opened", last[*github.PullRequestEvent](t, f.hooks).GetAction())
	before := pr.GetHead().GetSHA()
	commitLocal(t, wt, fs, "clusters/dev/extra.yaml", "extra: true\n")
	push(t, local, auth, "refs/heads/gitops/dev:refs/heads/gitops/dev")
	sync := last[*github.PullRequestEvent](t, f.hooks)
	require.Equal(t, "synchronize", sync.GetAction())
	require.Equal(t, before, sync.GetBefore())
	head := sync.GetAfter()
	require.Equal(t, head, sync.GetPullRequest().GetHead().GetSHA())

	checkRunFlow(t, f, gh, head)
	require.NoError(t, f.sim.PostStatus(testOwner, testRepo, head, "success", FluxStatusContext("Kustomization", "apps", "0c9c2e41-aaaa"), "reconciliation succeeded"))
	require.Equal(t, "kustomization/apps/0c9c2e41", last[*github.StatusEvent](t, f.hooks).GetContext())
	combined, _, err := gh.Repositories.GetCombinedStatus(ctx(), testOwner, testRepo, head, nil)
	require.NoError(t, err)
	require.Equal(t, "success", combined.GetState())

	// A fault fails the next call only, before anything happens.
	f.sim.InjectFault(Fault{Method: "PUT", PathPattern: "/repos/{owner}/{repo}/pulls/{pull_number}/merge", Status: 502})
	_, resp, err := gh.PullRequests.Merge(ctx(), testOwner, testRepo, pr.GetNumber(), "", nil)
	require.Error(t, err)
	require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	got, _, err := gh.PullRequests.Get(ctx(), testOwner, testRepo, pr.GetNumber())
	require.NoError(t, err)
	require.False(t, got.GetMerged())

	// Merge: a real merge commit, push and pull_request closed (merged) webhooks.
	res, _, err := gh.PullRequests.Merge(ctx(), testOwner, testRepo, pr.GetNumber(), "", &github.PullRequestOptions{SHA: head})
	require.NoError(t, err)
	closed := last[*github.PullRequestEvent](t, f.hooks)
	require.Equal(t, "closed", closed.GetAction())
	require.True(t, closed.GetPullRequest().GetMerged())
	require.Equal(t, res.GetSHA(), closed.GetPullRequest().GetMergeCommitSHA())
	require.Equal(t, res.GetSHA(), last[*github.PushEvent](t, f.hooks).GetAfter())
	require.NoError(t, local.Fetch(&git.FetchOptions{Auth: auth, RefSpecs: []config.RefSpec{"refs/heads/main:refs/remotes/origin/main"}}))
	mc, err := local.CommitObject(plumbing.NewHash(res.GetSHA()))
	require.NoError(t, err)
	require.Equal(t, []plumbing.Hash{plumbing.NewHash(f.seed), plumbing.NewHash(head)}, mc.ParentHashes)
	content, err := f.sim.ReadFile(testOwner, testRepo, "main", "clusters/dev/extra.yaml")
	require.NoError(t, err)
	require.Equal(t, "extra: true\n", content)

	// Redelivery sends the same bytes with the same delivery ID.
	deliveries := f.sim.Deliveries()
	first := deliveries[0]
	n := len(f.hooks.all())
	again, err := f.sim.Redeliver(first.ID)
	require.NoError(t, err)
	require.Equal(t, 2, again.Attempts)
	re := f.hooks.all()[n]
	require.Equal(t, first.ID, re.delivery)
	require.Equal(t, first.Body, re.body)

	// A wrong token is refused by the git server.
	_, err = git.Clone(memory.NewStorage(), nil, &git.CloneOptions{
		URL: f.sim.GitURL(testOwner, testRepo), Auth: &githttp.BasicAuth{Username: "x-access-token", Password: "ghs_wrong"},
	})
	require.Error(t, err)
	require.Positive(t, f.sim.GitCalls()["POST git-receive-pack"])
}

func checkRunFlow(t *testing.T, f *fixture, gh *github.Client, head string) {
	anns := make([]*github.CheckRunAnnotation, 51)
	for i := range anns {
		anns[i] = &github.CheckRunAnnotation{Path: ptr("clusters/dev/app.yaml"), StartLine: ptr(1), EndLine: ptr(1), AnnotationLevel: ptr("notice"), Message: ptr("ok")}
	}
	opts := github.CreateCheckRunOptions{Name: "kalypso/dev", HeadSHA: head, Status: ptr("in_progress"),
		Output: &github.CheckRunOutput{Title: ptr("Plan"), Summary: ptr("s"), Annotations: anns}}
	_, resp, err := gh.Checks.CreateCheckRun(ctx(), testOwner, testRepo, opts)
	require.Error(t, err, "51 annotations in one request")
	require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
	opts.Output.Annotations = anns[:50]
	run, _, err := gh.Checks.CreateCheckRun(ctx(), testOwner, testRepo, opts)
	require.NoError(t, err)
	require.Equal(t, "created", last[*github.CheckRunEvent](t, f.hooks).GetAction())
	run, _, err = gh.Checks.UpdateCheckRun(ctx(), testOwner, testRepo, run.GetID(), github.UpdateCheckRunOptions{
		Name: "kalypso/dev", Conclusion: ptr("neutral"), CompletedAt: &github.Timestamp{Time: time.Now()},
		Output:  &github.CheckRunOutput{Title: ptr("Plan"), Summary: ptr("s"), Annotations: anns[:5]},
		Actions: []*github.CheckRunAction{{Label: "Promote", Description: "Promote to prod", Identifier: "promote"}},
	})
	require.NoError(t, err)
	require.Equal(t, 55, run.GetOutput().GetAnnotationsCount())
	require.Equal(t, 1, len(run.PullRequests))
	require.NoError(t, f.sim.ClickCheckRunAction(run.GetID(), "promote", "octocat"))
	ev := last[*github.CheckRunEvent](t, f.hooks)
	require.Equal(t, "requested_action", ev.GetAction())
	require.Equal(t, "promote", ev.GetRequestedAction().Identifier)
	require.Equal(t, "octocat", ev.GetSender().GetLogin())
	require.Equal(t, run.GetID(), ev.GetCheckRun().GetID())
	require.NoError(t, f.sim.RerequestCheckRun(run.GetID(), "octocat"))
	require.Equal(t, "rerequested", last[*github.CheckRunEvent](t, f.hooks).GetAction())
}

func commitLocal(t *testing.T, wt *git.Worktree, fs billy.Filesystem, path, content string) {
	t.Helper()
	require.NoError(t, util.WriteFile(fs, path, []byte(content), 0o644))
	_, err := wt.Add(path)
	require.NoError(t, err)
	_, err = wt.Commit("update "+path, &git.CommitOptions{Author: &object.Signature{Name: "kalypso", Email: "kalypso@example.test", When: time.Now()}})
	require.NoError(t, err)
}

func push(t *testing.T, r *git.Repository, auth *githttp.BasicAuth, spec string) {
	t.Helper()
	require.NoError(t, r.Push(&git.PushOptions{Auth: auth, RefSpecs: []config.RefSpec{config.RefSpec(spec)}}))
}
