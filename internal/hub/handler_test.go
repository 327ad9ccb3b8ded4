package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

const (
	devSecret  = "dev-control-plane-secret"
	ownSecret  = "other-control-plane-own-secret"
	argoToken  = "argo-cd-bearer-token-0123"
	sampleSHA  = "3f4a9c2e8b7d61f05a2c9e4b1d8f7a6c5e3b2a10"
	fluxTime   = "2026-08-24T09:15:42Z"
	controlCP  = "org/platform"
	otherCP    = "org/other"
	reportPath = ReportsPath
)

// testHub is a hub over an in-memory SQLite store with two control planes: org/platform
// (default keys, environments dev and stage) and org/other (its own secret, environment qa
// on GitOps branch dev of another repository).
type testHub struct {
	t      *testing.T
	hub    *Hub
	st     *store.Store
	srv    *httptest.Server
	now    time.Time
	mu     sync.Mutex
	woken  []string
	cancel context.CancelFunc
}

func keysFor(cp string) Credentials {
	if strings.EqualFold(cp, otherCP) {
		return Credentials{Secret: []byte(ownSecret)}
	}
	return Credentials{Secret: []byte(devSecret), BearerToken: []byte(argoToken)}
}

func newTestHub(t *testing.T, limits Limits) *testHub {
	st, err := store.Open(context.Background(), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	th := &testHub{t: t, st: st, now: time.Date(2026, 8, 24, 9, 16, 0, 0, time.UTC)}
	targets := []Target{
		{ControlPlane: controlCP, Environment: "dev", GitOpsRepo: "org/gitops", GitOpsBranch: "dev", ClusterTypes: []string{"large", "small"}},
		{ControlPlane: controlCP, Environment: "stage", GitOpsRepo: "org/gitops", GitOpsBranch: "stage", ClusterTypes: []string{"large"}},
		{ControlPlane: otherCP, Environment: "qa", GitOpsRepo: "org/other-gitops", GitOpsBranch: "dev", ClusterTypes: []string{"large"}},
		{ControlPlane: controlCP, Environment: "prod", GitOpsRepo: "org/gitops", GitOpsBranch: "prod"},
	}
	dir := NewDirectory(func(context.Context) ([]Target, error) { return targets, nil }, time.Minute, time.Second, th.clock)
	if limits.MaxAge == 0 {
		limits.MaxAge = 5 * time.Minute
	}
	limits.ClockSkew = time.Minute
	if limits.MaxBodyBytes == 0 {
		limits.MaxBodyBytes = 64 << 10
	}
	if limits.MaxConcurrent == 0 {
		limits.MaxConcurrent = 16
	}
	if limits.MaxClusters == 0 {
		limits.MaxClusters = 1000
	}
	th.hub = New(Options{Store: st, Directory: dir, Keys: keysFor, Limits: limits, Now: th.clock, Logger: zerolog.Nop(),
		OnReport: func(cp, env string) { th.mu.Lock(); th.woken = append(th.woken, cp+"/"+env); th.mu.Unlock() }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { th.hub.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	mux := http.NewServeMux()
	th.hub.Register(mux)
	th.srv = httptest.NewServer(mux)
	t.Cleanup(th.srv.Close)
	return th
}

func (th *testHub) clock() time.Time { th.mu.Lock(); defer th.mu.Unlock(); return th.now }

// post sends body with headers and returns the status and the answer.
func (th *testHub) post(body []byte, headers map[string]string) (int, Answer) {
	req, err := http.NewRequest(http.MethodPost, th.srv.URL+reportPath, bytes.NewReader(body))
	require.NoError(th.t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(th.t, err)
	defer resp.Body.Close()
	var a Answer
	data, _ := io.ReadAll(resp.Body)
	require.NoError(th.t, json.Unmarshal(data, &a), string(data))
	return resp.StatusCode, a
}

func signed(secret string, body []byte) map[string]string {
	return map[string]string{HeaderSignature: Sign([]byte(secret), body)}
}

// fluxBody is a notification-controller event of cluster on branch at timestamp ts.
func fluxBody(cluster, clusterType, branch, sha, severity, ts string) []byte {
	reason := "ReconciliationSucceeded"
	if severity == "error" {
		reason = "HealthCheckFailed"
	}
	return []byte(fmt.Sprintf(`{"involvedObject":{"kind":"Kustomization","namespace":"flux-system","name":"gitops","apiVersion":"kustomize.toolkit.fluxcd.io/v1"},`+
		`"severity":%q,"timestamp":%q,"message":"m","reason":%q,"metadata":{"cluster":%q,"clusterType":%q,"revision":"%s@sha1:%s"},`+
		`"reportingController":"kustomize-controller"}`, severity, ts, reason, cluster, clusterType, branch, sha))
}

func TestRealFluxReportIsAcceptedAndStored(t *testing.T) {
	th := newTestHub(t, Limits{})
	body, err := os.ReadFile("testdata/flux-kustomization-succeeded.json")
	require.NoError(t, err)
	code, a := th.post(body, signed(devSecret, body))
	require.Equal(t, http.StatusAccepted, code, a.Error)
	require.Equal(t, Answer{Accepted: true, ControlPlane: controlCP, Environment: "dev", Cluster: "west-01"}, a)
	st, err := th.st.States(context.Background(), store.StateQuery{ControlPlane: controlCP, Environment: "dev"})
	require.NoError(t, err)
	require.Len(t, st, 1)
	require.Equal(t, sampleSHA, st[0].Objects[0].GitOpsCommit)
	th.mu.Lock()
	require.Equal(t, []string{"org/platform/dev"}, th.woken, "the environment's gate is woken")
	th.mu.Unlock()
}

func TestForgedUnsignedStaleReplayedReportsAreRefused(t *testing.T) {
	th := newTestHub(t, Limits{})
	body := fluxBody("west-02", "large", "dev", sampleSHA, "info", "2026-08-24T09:15:30Z")
	cases := []struct {
		name    string
		body    []byte
		headers map[string]string
		code    int
		reason  string
	}{
		{"unsigned", body, nil, 401, "unsigned"},
		{"forged", body, signed("not-the-secret", body), 401, "bad X-Signature"},
		{"signature of another body", body, signed(devSecret, append([]byte{' '}, body...)), 401, "bad X-Signature"},
		{"malformed signature", body, map[string]string{HeaderSignature: "sha1=abc"}, 401, "bad X-Signature"},
		{"bad control plane header", body, map[string]string{HeaderSignature: Sign([]byte(devSecret), body), HeaderControlPlane: "../x"}, 401, "OWNER/REPO"},
		{"stale", fluxBody("west-02", "large", "dev", sampleSHA, "info", "2026-08-24T09:10:59Z"), nil, 400, "reports.maxAge"},
		{"future", fluxBody("west-02", "large", "dev", sampleSHA, "info", "2026-08-24T09:17:01Z"), nil, 400, "reports.clockSkew"},
		{"unknown environment", fluxBody("west-02", "large", "main", sampleSHA, "info", fluxTime), nil, 422, `no environment with GitOps branch "main"`},
		{"unknown cluster type", fluxBody("west-02", "huge", "dev", sampleSHA, "info", fluxTime), nil, 422, `unknown cluster type "huge"`},
		{"environment not rendered yet", fluxBody("west-02", "large", "prod", sampleSHA, "info", fluxTime), nil, 503, "not loaded yet"},
		{"bearer over plain HTTP", body, map[string]string{"Authorization": "Bearer " + argoToken}, 401, "HTTPS only"},
		{"bad bearer", body, map[string]string{"Authorization": "Bearer nope", "X-Forwarded-Proto": "https"}, 401, "bad bearer token"},
	}
	for _, tc := range cases {
		headers := tc.headers
		if headers == nil {
			headers = signed(devSecret, tc.body)
			if tc.name == "unsigned" {
				headers = map[string]string{}
			}
		}
		code, a := th.post(tc.body, headers)
		require.Equal(t, tc.code, code, tc.name+": "+a.Error)
		require.Contains(t, a.Error, tc.reason, tc.name)
		require.False(t, a.Accepted)
	}
	n, err := th.st.CountReports(context.Background())
	require.NoError(t, err)
	require.Zero(t, n, "nothing of a refused report is kept")

	code, _ := th.post(body, signed(devSecret, body))
	require.Equal(t, http.StatusAccepted, code)
	code, a := th.post(body, signed(devSecret, body))
	require.Equal(t, http.StatusConflict, code)
	require.Contains(t, a.Error, "replayed")
}

func TestKeysSelectTheControlPlane(t *testing.T) {
	th := newTestHub(t, Limits{})
	body := fluxBody("west-03", "large", "dev", sampleSHA, "info", fluxTime)
	code, a := th.post(body, signed(devSecret, body))
	require.Equal(t, http.StatusAccepted, code, a.Error)
	require.Equal(t, controlCP, a.ControlPlane, "the default key reports into control planes without their own key only")

	code, a = th.post(body, map[string]string{HeaderSignature: Sign([]byte(ownSecret), body), HeaderControlPlane: otherCP})
	require.Equal(t, http.StatusAccepted, code, a.Error)
	require.Equal(t, Answer{Accepted: true, ControlPlane: otherCP, Environment: "qa", Cluster: "west-03"}, a)

	body = fluxBody("west-04", "large", "dev", sampleSHA, "info", fluxTime)
	code, a = th.post(body, map[string]string{HeaderSignature: Sign([]byte(devSecret), body), HeaderControlPlane: otherCP})
	require.Equal(t, http.StatusUnauthorized, code, "the default key does not sign for a control plane with its own")
	code, a = th.post(body, map[string]string{HeaderSignature: Sign([]byte(ownSecret), body)})
	require.Equal(t, http.StatusUnauthorized, code, "without the header, the defaults are used: %s", a.Error)
}

func TestArgoCDReportWithBearerToken(t *testing.T) {
	th := newTestHub(t, Limits{})
	body := []byte(`{"source":"argocd","cluster":"east-01","clusterType":"large","destination":"in-cluster","application":"podinfo",` +
		`"revision":"` + sampleSHA + `","targetRevision":"stage","health":"Healthy","phase":"Succeeded","state":"success","message":"",` +
		`"timestamp":"` + fluxTime + `"}`)
	code, a := th.post(body, map[string]string{"Authorization": "Bearer " + argoToken, "X-Forwarded-Proto": "https"})
	require.Equal(t, http.StatusAccepted, code, a.Error)
	require.Equal(t, Answer{Accepted: true, ControlPlane: controlCP, Environment: "stage", Cluster: "east-01"}, a)
}

func TestOversizedBodiesAreRefusedUnread(t *testing.T) {
	th := newTestHub(t, Limits{MaxBodyBytes: 1024})
	big := bytes.Repeat([]byte("x"), 4096)
	code, a := th.post(big, nil)
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	require.Contains(t, a.Error, "reports.maxBodyBytes")
	// Without a Content-Length (chunked), the body is cut off at the limit.
	req, err := http.NewRequest(http.MethodPost, th.srv.URL+reportPath, io.MultiReader(bytes.NewReader(big)))
	require.NoError(t, err)
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
}

func TestClustersOverTheCapAreRefused(t *testing.T) {
	th := newTestHub(t, Limits{MaxClusters: 2})
	for i, want := range []int{202, 202, 403} {
		body := fluxBody(fmt.Sprintf("c%d", i), "large", "dev", sampleSHA, "info", fluxTime)
		code, a := th.post(body, signed(devSecret, body))
		require.Equal(t, want, code, a.Error)
		if want == 403 {
			require.Contains(t, a.Error, "reports.maxClustersPerEnvironment")
		}
	}
	body := fluxBody("c0", "large", "dev", sampleSHA, "error", fluxTime)
	code, _ := th.post(body, signed(devSecret, body))
	require.Equal(t, http.StatusAccepted, code, "registered clusters still report")
}

func TestBusyEndpointAnswers503Unread(t *testing.T) {
	th := newTestHub(t, Limits{MaxConcurrent: 1})
	th.hub.slots <- struct{}{} // one request in flight
	defer func() { <-th.hub.slots }()
	body := fluxBody("c0", "large", "dev", sampleSHA, "info", fluxTime)
	code, a := th.post(body, signed(devSecret, body))
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, a.Error, "reports.maxConcurrent")
}
