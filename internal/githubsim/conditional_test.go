package githubsim

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestETagAndRateLimit(t *testing.T) {
	f := newFixture(t)
	path := repoPath("/commits/main/status")
	code, _, h := f.do(t, "GET", path, nil)
	require.Equal(t, http.StatusOK, code)
	etag := h.Get("ETag")
	require.NotEmpty(t, etag)
	remaining, err := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	require.NoError(t, err)
	require.NotEmpty(t, h.Get("X-RateLimit-Reset"))

	code, body, h := f.do(t, "GET", path, nil, "If-None-Match", etag)
	require.Equal(t, http.StatusNotModified, code)
	require.Empty(t, body)
	require.Equal(t, strconv.Itoa(remaining), h.Get("X-RateLimit-Remaining"), "a 304 is free")

	main, err := f.sim.BranchSHA(testOwner, testRepo, "main")
	require.NoError(t, err)
	require.NoError(t, f.sim.PostStatus(testOwner, testRepo, main, "success", "kustomization/apps/1", "ok"))
	code, _, h = f.do(t, "GET", path, nil, "If-None-Match", etag)
	require.Equal(t, http.StatusOK, code, "a new status changes the ETag")
	require.Equal(t, strconv.Itoa(remaining-1), h.Get("X-RateLimit-Remaining"))
	require.Equal(t, 3, f.sim.CallCount("GET /repos/{owner}/{repo}/commits/{ref}/status"))

	f.sim.SetRateLimitRemaining(f.inst, 1)
	code, _, h = f.do(t, "GET", repoPath(""), nil)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "0", h.Get("X-RateLimit-Remaining"))
	code, _, _ = f.do(t, "GET", repoPath(""), nil)
	require.Equal(t, http.StatusForbidden, code)
}
