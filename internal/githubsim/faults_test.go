package githubsim

import (
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

func TestFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault Fault
		calls []string // METHOD path of calls made in order
		want  []int
	}{
		{"route pattern, twice", Fault{PathPattern: "/repos/{owner}/{repo}", Status: 502, Times: 2},
			[]string{"GET /repos/contoso/gitops", "GET /repos/contoso/gitops", "GET /repos/contoso/gitops"}, []int{502, 502, 200}},
		{"method filter", Fault{Method: "POST", PathPattern: "/repos/{owner}/{repo}/statuses/{sha}", Status: 500},
			[]string{"GET /repos/contoso/gitops/commits/main/status", "POST /repos/contoso/gitops/statuses/main"}, []int{200, 500}},
		{"path prefix", Fault{PathPattern: "/api/v3/repos/contoso/gitops/git/", Status: 503},
			[]string{"GET /repos/contoso/gitops", "GET /repos/contoso/gitops/git/ref/heads/main"}, []int{200, 503}},
		{"pattern subtree", Fault{PathPattern: "/repos/{owner}/{repo}/git/", Status: 504},
			[]string{"GET /repos/contoso/gitops/git/ref/heads/main"}, []int{504}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.sim.InjectFault(tt.fault)
			for i, c := range tt.calls {
				var method, path string
				for j := range c {
					if c[j] == ' ' {
						method, path = c[:j], c[j+1:]
						break
					}
				}
				code, _, _ := f.do(t, method, path, nil)
				require.Equal(t, tt.want[i], code, c)
			}
			require.Zero(t, f.sim.PendingFaults())
		})
	}
}

func TestFaultAppliesNothing(t *testing.T) {
	f := newFixture(t)
	f.sim.InjectFault(SecondaryRateLimit("POST", "/repos/{owner}/{repo}/git/refs", 7))
	_, resp, err := f.client.Git.CreateRef(ctx(), testOwner, testRepo, &github.Reference{Ref: ptr("refs/heads/x"), Object: &github.GitObject{SHA: &f.seed}})
	require.Error(t, err)
	var abuse *github.AbuseRateLimitError
	require.ErrorAs(t, err, &abuse)
	require.Equal(t, "7", resp.Header.Get("Retry-After"))
	_, err = f.sim.BranchSHA(testOwner, testRepo, "x")
	require.Error(t, err, "the failed call created nothing")
	require.Empty(t, f.hooks.all())
	require.Equal(t, 1, f.sim.CallCount("POST /repos/{owner}/{repo}/git/refs"))
	reset := time.Now().Add(time.Minute).Truncate(time.Second)
	f.sim.InjectFault(PrimaryRateLimit("", "/repos/{owner}/{repo}", reset))
	// A fresh client: go-github remembers the secondary limit and fails fast.
	_, _, err = f.tokenClient(f.token).Repositories.Get(ctx(), testOwner, testRepo)
	var rle *github.RateLimitError
	require.ErrorAs(t, err, &rle)
	require.Equal(t, reset.Unix(), rle.Rate.Reset.Unix())
	f.sim.ResetCalls()
	require.Zero(t, f.sim.TotalCalls())
}
