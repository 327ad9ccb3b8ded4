package githubsim

import (
	"net/http"
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

// A gate holds the calls it selects (by header here, as a test's proxy marks one replica)
// until it is closed, then they are served normally; other calls pass meanwhile.
func TestFaultGateHoldsSelectedCalls(t *testing.T) {
	f := newFixture(t)
	gate := make(chan struct{})
	f.sim.InjectFault(Fault{Method: "GET", PathPattern: "/repos/{owner}/{repo}", Header: map[string]string{"X-Replica": "a"}, Gate: gate})
	held := make(chan int, 1)
	go func() {
		code, _, _ := f.do(t, "GET", repoPath(""), nil, "X-Replica", "a")
		held <- code
	}()
	require.Eventually(t, func() bool { return f.sim.HeldCalls() == 1 }, 10*time.Second, time.Millisecond)
	code, _, _ := f.do(t, "GET", repoPath(""), nil, "X-Replica", "b")
	require.Equal(t, 200, code, "another replica's call is not held")
	require.Zero(t, f.sim.PendingFaults(), "the fault was used by the held call")
	close(gate)
	require.Equal(t, 200, <-held, "the held call is served once released")
	require.Zero(t, f.sim.HeldCalls())
}

// A delay holds a git request, then serves it; a status after the delay fails it.
func TestFaultDelaysGitRequests(t *testing.T) {
	f := newFixture(t)
	f.sim.InjectFault(Fault{Git: true, PathPattern: "/" + testOwner + "/" + testRepo + ".git/", Delay: 10 * time.Millisecond, Status: 502})
	req, err := http.NewRequest("GET", f.sim.GitURL(testOwner, testRepo)+"/info/refs?service=git-upload-pack", nil)
	require.NoError(t, err)
	req.SetBasicAuth("x-access-token", f.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 502, resp.StatusCode)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	code, _, _ := f.do(t, "GET", repoPath(""), nil)
	require.Equal(t, 200, code, "a git fault never matches REST calls")
}
