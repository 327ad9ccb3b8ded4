package e2e

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// GitHub answers some calls with server errors, then with rate limits that say when to come
// back; the app waits as asked, retries, and converges with nothing half-written.
func TestE2ETransientErrorsAndRateLimitsAreRetried(t *testing.T) {
	serverError := func(method, path string, status int) githubsim.Fault {
		return githubsim.Fault{Method: method, PathPattern: path, Status: status}
	}
	retryAfter := func(method, path string) githubsim.Fault {
		return githubsim.Fault{Method: method, PathPattern: path, Status: 403, Headers: map[string]string{"Retry-After": "1"},
			Body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`}
	}
	rateLimited := func(method, path string) githubsim.Fault {
		reset := strconv.FormatInt(time.Now().Add(time.Second).Unix(), 10)
		return githubsim.Fault{Method: method, PathPattern: path, Status: 403, Headers: map[string]string{
			"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
			"X-RateLimit-Reset": reset, "X-RateLimit-Resource": "core"},
			Body: `{"message":"API rate limit exceeded for installation."}`}
	}
	const (
		pulls     = "/repos/{owner}/{repo}/pulls"
		pull      = "/repos/{owner}/{repo}/pulls/{pull_number}"
		checkRuns = "/repos/{owner}/{repo}/check-runs"
	)
	cases := []struct {
		name string
		// beforeStart faults hit the first resync, which opens the pull requests.
		beforeStart []githubsim.Fault
		// onPush faults hit the processing of a push to dev, which updates its pull request.
		onPush []githubsim.Fault
	}{{
		name: "opening pull requests at start",
		beforeStart: []githubsim.Fault{
			serverError("GET", "/app/installations", 503),
			serverError("GET", "/installation/repositories", 500),
			serverError("GET", pulls, 502),
			retryAfter("POST", pulls),
			rateLimited("POST", pulls),
		},
	}, {
		name: "updating a pull request and reporting",
		onPush: []githubsim.Fault{
			serverError("GET", pulls, 502),
			serverError("GET", pulls, 504),
			retryAfter("PATCH", pull),
			rateLimited("POST", checkRuns),
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			for _, f := range tc.beforeStart {
				w.sim.InjectFault(f)
			}
			w.start()
			require.Zero(t, w.sim.PendingFaults(), "every fault was met")
			number := w.appPR("dev").GetNumber()
			for _, f := range tc.onPush {
				w.sim.InjectFault(f)
			}
			sha := w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Retried"))})
			require.Zero(t, w.sim.PendingFaults(), "every fault was met")

			faults := append(append([]githubsim.Fault{}, tc.beforeStart...), tc.onPush...)
			retries := w.retries()
			require.Len(t, retries, len(faults), "one retry per fault")
			for i, f := range faults {
				r := retries[i]
				require.Equal(t, f.Method, r.Method, "retry %d", i)
				require.Equal(t, f.Status, r.Status, "retry %d", i)
				switch {
				case f.Status >= 500:
					require.Equal(t, "server_error", r.Reason, "retry %d", i)
				case f.Headers["Retry-After"] != "":
					require.Equal(t, "retry_after", r.Reason, "retry %d", i)
					require.InDelta(t, 1000, r.WaitMS, 1, "retry %d waits as Retry-After says", i)
				default:
					require.Equal(t, "rate_limit", r.Reason, "retry %d", i)
					require.Greater(t, r.WaitMS, 0.0, "retry %d waits for the reset", i)
					require.LessOrEqual(t, r.WaitMS, 2000.0, "retry %d waits no longer than until the reset", i)
				}
			}
			require.NotContains(t, w.logs.String(), `"reconcile failed"`)
			require.NotContains(t, w.logs.String(), `"webhook processing failed"`)

			var opened []int
			for _, pr := range w.sim.PullRequests(sample.Owner, sample.GitOpsRepo) {
				if strings.HasPrefix(pr.GetHead().GetRef(), "kalypso/") {
					opened = append(opened, pr.GetNumber())
				}
			}
			require.Len(t, opened, 2, "exactly one pull request per environment was ever opened")
			require.Equal(t, number, w.appPR("dev").GetNumber())
			require.Contains(t, w.appPR("dev").GetBody(), "dev", "the pull request body was written")
			requireTree(t, w.expected("dev"), w.tree("kalypso/dev"), "kalypso/dev")
			requireTree(t, w.expected("stage"), w.tree("kalypso/stage"), "kalypso/stage")
			runs := w.checks(sample.ControlPlane, sha, "dev")
			require.Len(t, runs, 1, "one check run on the commit")
			require.Equal(t, "success", runs[0].GetConclusion())
		})
	}
}

// retry is one "retrying GitHub request" log entry of the app.
type retry struct {
	Method string  `json:"method"`
	Status int     `json:"status"`
	Reason string  `json:"reason"`
	WaitMS float64 `json:"wait_ms"`
}

// retries returns the app's retries in the order it logged them.
func (w *world) retries() []retry {
	var out []retry
	for _, line := range strings.Split(w.logs.String(), "\n") {
		if !strings.Contains(line, `"retrying GitHub request"`) {
			continue
		}
		var r retry
		require.NoError(w.t, json.Unmarshal([]byte(line), &r), line)
		out = append(out, r)
	}
	return out
}
