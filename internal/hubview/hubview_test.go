package hubview

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/hub"
	"github.com/kalypso-gitops/kalypso/internal/store"
)

var errNoSession = errors.New("no session")

const sha = "2222222222222222222222222222222222222222"

// server serves the hub views of org/cp (readable) and org/secret (not) to alice, who is
// signed in when her request carries the cookie "session".
func server(t *testing.T) *httptest.Server {
	now := time.Now()
	st, err := store.Open(context.Background(), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	_, err = st.Ingest(context.Background(), []store.Report{{ControlPlane: "org/cp", Environment: "dev", ClusterType: "large", Cluster: "west-01",
		Object: "Kustomization/flux-system/gitops", Source: "flux", GitOpsCommit: sha, State: store.StateFailure, Reason: "HealthCheckFailed",
		Message: "<script>alert(1)</script>", EventAt: now, ReceivedAt: now}}, store.IngestOptions{})
	require.NoError(t, err)
	targets := []hub.Target{{ControlPlane: "org/cp", Environment: "dev", GitOpsBranch: "dev", ClusterTypes: []string{"large"}},
		{ControlPlane: "org/cp", Environment: "stage", GitOpsBranch: "stage", ClusterTypes: []string{"large"}},
		{ControlPlane: "org/secret", Environment: "dev", GitOpsBranch: "x", ClusterTypes: []string{"large"}}}
	h := hub.New(hub.Options{Store: st, Logger: zerolog.Nop(),
		Directory: hub.NewDirectory(func(context.Context) ([]hub.Target, error) { return targets, nil }, time.Hour, time.Hour, time.Now),
		Desired: func(t hub.Target) (hub.Desired, bool) {
			return hub.Desired{Assignments: []hub.Assignment{{Key: "large/app-" + t.Environment, ClusterType: "large", Workload: "app"}}}, true
		},
		Head: func(context.Context, hub.Target) (string, time.Time, error) { return sha, now, nil }})
	reader := func(r *http.Request) (string, func(context.Context, string) (bool, error), error) {
		if c, err := r.Cookie("session"); err != nil || c.Value != "alice" {
			return "", nil, errNoSession
		}
		return "alice", func(_ context.Context, repo string) (bool, error) { return repo == "org/cp", nil }, nil
	}
	mux := http.NewServeMux()
	New(h, reader, errNoSession, zerolog.Nop()).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, srv *httptest.Server, path string, signedIn bool) (int, string, http.Header) {
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	require.NoError(t, err)
	if signedIn {
		req.AddCookie(&http.Cookie{Name: "session", Value: "alice"})
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

func TestAPIAnswersSignedInReadersOnly(t *testing.T) {
	srv := server(t)
	code, body, _ := get(t, srv, "/api/v1/hub/clusters?controlPlane=org/cp&environment=dev", false)
	require.Equal(t, http.StatusUnauthorized, code, body)
	code, _, hdr := get(t, srv, "/fleet/hub/clusters?controlPlane=org/cp&environment=dev", false)
	require.Equal(t, http.StatusSeeOther, code)
	require.Equal(t, "/fleet/login", hdr.Get("Location"))

	code, body, _ = get(t, srv, "/api/v1/hub/clusters?controlPlane=org/cp&environment=dev", true)
	require.Equal(t, http.StatusOK, code, body)
	var page hub.ClustersPage
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.Equal(t, "west-01", page.Clusters[0].Name)
	require.Equal(t, store.StateFailure, page.Clusters[0].State)

	code, body, _ = get(t, srv, "/api/v1/hub/clusters?controlPlane=org/secret&environment=dev", true)
	require.Equal(t, http.StatusNotFound, code, "a control plane the user cannot read does not exist for them: %s", body)
	code, body, _ = get(t, srv, "/api/v1/hub/environments", true)
	require.Equal(t, http.StatusOK, code)
	require.NotContains(t, body, "org/secret")
	require.Contains(t, body, `"registered": 1`)

	for path, want := range map[string]string{
		"/api/v1/hub/clusters?controlPlane=../x&environment=dev":              "controlPlane must be OWNER/REPO",
		"/api/v1/hub/clusters?controlPlane=org/cp":                            "environment is required",
		"/api/v1/hub/clusters?controlPlane=org/cp&environment=Dev":            "environment is not a name",
		"/api/v1/hub/clusters?controlPlane=org/cp&environment=dev&limit=0":    "limit must be a whole number from 1 to 1000",
		"/api/v1/hub/cluster?controlPlane=org/cp&environment=dev&cluster=a/b": "cluster is not a cluster name",
	} {
		code, body, _ = get(t, srv, path, true)
		require.Equal(t, http.StatusBadRequest, code, path)
		require.Contains(t, body, want, path)
	}
	code, _, _ = get(t, srv, "/api/v1/hub/cluster?controlPlane=org/cp&environment=dev&cluster=nope", true)
	require.Equal(t, http.StatusNotFound, code)
}

func TestEveryPageRendersEscaped(t *testing.T) {
	srv := server(t)
	for _, path := range []string{
		"/fleet/hub/environments",
		"/fleet/hub/clusters?controlPlane=org/cp&environment=dev",
		"/fleet/hub/cluster?controlPlane=org/cp&environment=dev&cluster=west-01",
		"/fleet/hub/drift?controlPlane=org/cp&environment=dev",
		"/fleet/hub/workloads?controlPlane=org/cp",
		"/fleet/hub/compare?controlPlane=org/cp&from=dev&to=stage",
		"/fleet/hub/history?controlPlane=org/cp&environment=dev",
		"/fleet/hub/dora?controlPlane=org/cp&environment=dev",
	} {
		code, body, hdr := get(t, srv, path, true)
		require.Equal(t, http.StatusOK, code, path+": "+body)
		require.Equal(t, "text/html; charset=utf-8", hdr.Get("Content-Type"))
		require.Contains(t, hdr.Get("Content-Security-Policy"), "default-src 'none'")
		require.NotContains(t, body, "<script>", path)
		require.Contains(t, body, `<strong id="login">alice</strong>`)
	}
	_, body, _ := get(t, srv, "/fleet/hub/cluster?controlPlane=org/cp&environment=dev&cluster=west-01", true)
	require.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;")
	_, body, _ = get(t, srv, "/fleet/hub/compare?controlPlane=org/cp&from=dev&to=stage", true)
	require.True(t, strings.Contains(body, `data-key="large/app-dev" data-in="from"`) && strings.Contains(body, `data-key="large/app-stage" data-in="to"`), body)
}
