package githubsim

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

func TestCombinedStatus(t *testing.T) {
	tests := []struct {
		name   string
		posts  [][2]string // context, state in order
		want   string
		counts int
	}{
		{"none is pending", nil, "pending", 0},
		{"all success", [][2]string{{"a", "success"}, {"b", "success"}}, "success", 2},
		{"one failure", [][2]string{{"a", "success"}, {"b", "failure"}}, "failure", 2},
		{"error counts as failure", [][2]string{{"a", "error"}}, "failure", 1},
		{"pending wins over success", [][2]string{{"a", "success"}, {"b", "pending"}}, "pending", 2},
		{"latest per context", [][2]string{{"a", "failure"}, {"a", "success"}}, "success", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			for _, p := range tt.posts {
				_, _, err := f.client.Repositories.CreateStatus(ctx(), testOwner, testRepo, f.seed, &github.RepoStatus{Context: ptr(p[0]), State: ptr(p[1])})
				require.NoError(t, err)
			}
			got, _, err := f.client.Repositories.GetCombinedStatus(ctx(), testOwner, testRepo, "main", nil)
			require.NoError(t, err)
			require.Equal(t, tt.want, got.GetState())
			require.Equal(t, tt.counts, got.GetTotalCount())
			all, _, err := f.client.Repositories.ListStatuses(ctx(), testOwner, testRepo, f.seed, nil)
			require.NoError(t, err)
			require.Len(t, all, len(tt.posts))
			if len(all) > 0 {
				last := tt.posts[len(tt.posts)-1]
				require.Equal(t, last[0], all[0].GetContext(), "newest first")
			}
		})
	}
}

func TestStatusValidationAndWebhook(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name string
		sha  string
		st   github.RepoStatus
		want int
	}{
		{"ok", f.seed, github.RepoStatus{State: ptr("success"), Context: ptr("c")}, http.StatusCreated},
		{"bad state", f.seed, github.RepoStatus{State: ptr("done")}, 422},
		{"long description", f.seed, github.RepoStatus{State: ptr("success"), Description: ptr(strings.Repeat("d", 141))}, 422},
		{"unknown sha", strings.Repeat("2", 40), github.RepoStatus{State: ptr("success")}, 422},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, resp, _ := f.client.Repositories.CreateStatus(ctx(), testOwner, testRepo, tt.sha, &tt.st)
			require.Equal(t, tt.want, resp.StatusCode)
		})
	}
	ev := last[*github.StatusEvent](t, f.hooks)
	require.Equal(t, f.seed, ev.GetSHA())
	require.Equal(t, "c", ev.GetContext())
	require.Equal(t, f.sim.BotLogin(), ev.GetSender().GetLogin())
	require.Equal(t, "main", ev.Branches[0].GetName())
	require.Len(t, f.sim.Statuses(testOwner, testRepo, f.seed), 1)
}

func TestDeploymentsAndPermissions(t *testing.T) {
	f := newFixture(t)
	d, _, err := f.client.Repositories.CreateDeployment(ctx(), testOwner, testRepo, &github.DeploymentRequest{Ref: ptr("main"), Environment: ptr("dev")})
	require.NoError(t, err)
	_, _, err = f.client.Repositories.CreateDeploymentStatus(ctx(), testOwner, testRepo, d.GetID(), &github.DeploymentStatusRequest{State: ptr("success")})
	require.NoError(t, err)
	_, err = f.sim.PostDeployment(testOwner, testRepo, f.seed, "prod", "failure", "sync failed")
	require.NoError(t, err)
	list, _, err := f.client.Repositories.ListDeployments(ctx(), testOwner, testRepo, &github.DeploymentsListOptions{Environment: "dev"})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, f.seed, list[0].GetSHA())
	statuses, _, err := f.client.Repositories.ListDeploymentStatuses(ctx(), testOwner, testRepo, d.GetID(), nil)
	require.NoError(t, err)
	require.Equal(t, "success", statuses[0].GetState())
	require.Len(t, f.sim.Deployments(testOwner, testRepo), 2)

	require.NoError(t, f.sim.SetPermission(testOwner, testRepo, "alice", "maintain"))
	tests := []struct{ user, perm string }{
		{"alice", "write"},
		{"bob", "none"},
	}
	for _, tt := range tests {
		p, _, err := f.client.Repositories.GetPermissionLevel(ctx(), testOwner, testRepo, tt.user)
		require.NoError(t, err)
		require.Equal(t, tt.perm, p.GetPermission())
		require.Equal(t, tt.user, p.GetUser().GetLogin())
	}
	require.Error(t, f.sim.SetPermission(testOwner, testRepo, "alice", "owner"))
}

// TestCombinedStatusPages checks the combined status's pages as GitHub serves them: at most
// 100 contexts a page in context order, Link headers, and total_count and state over all of
// them on every page.
func TestCombinedStatusPages(t *testing.T) {
	f := newFixture(t)
	for i := range 250 {
		state := "success"
		if i == 249 {
			state = "failure"
		}
		require.NoError(t, f.sim.PostStatus(testOwner, testRepo, f.seed, state, fmt.Sprintf("kustomization/c%03d", i), "reported"))
	}
	opts := &github.ListOptions{PerPage: 500}
	var contexts []string
	for {
		got, resp, err := f.client.Repositories.GetCombinedStatus(ctx(), testOwner, testRepo, f.seed, opts)
		require.NoError(t, err)
		require.Equal(t, 250, got.GetTotalCount(), "total_count counts every page")
		require.Equal(t, "failure", got.GetState(), "the state of every context, whichever page it is on")
		require.LessOrEqual(t, len(got.Statuses), 100, "per_page is at most 100")
		for _, st := range got.Statuses {
			contexts = append(contexts, st.GetContext())
		}
		if resp.NextPage == 0 {
			require.Equal(t, 3, opts.Page, "three pages")
			require.Equal(t, 1, resp.FirstPage)
			require.Equal(t, 2, resp.PrevPage)
			break
		}
		require.Equal(t, 3, resp.LastPage)
		opts.Page = resp.NextPage
	}
	require.Len(t, contexts, 250)
	require.True(t, sort.StringsAreSorted(contexts), "in one stable order, so that pages do not overlap")
	require.Equal(t, "kustomization/c249", contexts[249])
	code, body, _ := f.do(t, "GET", repoPath("/commits/"+f.seed+"/status?per_page=100&page=4"), nil)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, string(body), `"statuses":[]`, "past the last page: none")
}
