package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/config"
)

func TestNewRejectsInvalidConfig(t *testing.T) {
	gh := newFakeGitHub(t)
	cfg := testConfig(t, gh.URL)
	cfg.GitHub.App.WebhookSecret = ""
	_, err := New(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "github.app.webhookSecret (KALYPSO_GITHUB_APP_WEBHOOK_SECRET) is required")

	cfg = testConfig(t, gh.URL)
	cfg.GitHub.App.PrivateKey = "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"
	_, err = New(cfg)
	assert.ErrorContains(t, err, "private key")
	_, err = New(nil)
	assert.Error(t, err)
}

func TestHealthzAndRoutes(t *testing.T) {
	gh := newFakeGitHub(t)
	s, _ := newTestServer(t, testConfig(t, gh.URL))
	r := start(t, s)

	resp, err := http.Get(r.url + "/healthz")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok", string(body))

	resp, err = http.Get(r.url + "/api/github/hook")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.NoError(t, r.stop(t))
}

func TestWebhookSignatureIsRequired(t *testing.T) {
	gh := newFakeGitHub(t)
	var calls atomic.Int32
	h := handlerFunc{events: []string{"push"}, fn: func(context.Context, string, string, []byte) error {
		calls.Add(1)
		return nil
	}}
	s, _ := newTestServer(t, testConfig(t, gh.URL), WithHandlers(h))
	r := start(t, s)

	assert.Equal(t, http.StatusBadRequest, deliver(t, r.url, "push", pushPayload, ""))
	assert.Equal(t, http.StatusBadRequest, deliver(t, r.url, "push", pushPayload, sign("wrong", pushPayload)))
	assert.Equal(t, http.StatusBadRequest, deliver(t, r.url, "push", pushPayload, sign(testSecret, pushPayload+" ")))
	assert.Equal(t, http.StatusBadRequest, deliver(t, r.url, "", pushPayload, sign(testSecret, pushPayload)))
	assert.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sign(testSecret, pushPayload)))
	assert.Equal(t, http.StatusAccepted, deliver(t, r.url, "issues", pushPayload, sign(testSecret, pushPayload)))
	assert.Equal(t, http.StatusOK, deliver(t, r.url, "ping", `{"zen":"hi"}`, sign(testSecret, `{"zen":"hi"}`)))
	require.NoError(t, r.stop(t))

	assert.Equal(t, int32(1), calls.Load(), "only the signed push reaches the handler")
	assert.Equal(t, int64(4), s.counter(MetricWebhooksReceived, "event", "push").Count())
	assert.Equal(t, int64(3), s.counter(MetricWebhooksFailed, "event", "push").Count())
	assert.Equal(t, int64(2), s.counter(MetricWebhooksReceived, "event", "other").Count(), "empty and unhandled event types")
	assert.Equal(t, int64(1), s.counter(MetricWebhooksReceived, "event", "ping").Count())
}

func TestQueueFullAnswers503(t *testing.T) {
	gh := newFakeGitHub(t)
	cfg := testConfig(t, gh.URL)
	cfg.Workers, cfg.QueueSize = 1, 1
	release := make(chan struct{})
	var started atomic.Int32
	h := handlerFunc{events: []string{"push"}, fn: func(context.Context, string, string, []byte) error {
		started.Add(1)
		<-release
		return nil
	}}
	s, _ := newTestServer(t, cfg, WithHandlers(h))
	r := start(t, s)
	sig := sign(testSecret, pushPayload)

	require.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sig))
	eventually(t, func() bool { return started.Load() == 1 }, "first event running")
	require.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sig), "second event queued")
	assert.Equal(t, http.StatusServiceUnavailable, deliver(t, r.url, "push", pushPayload, sig), "queue full")
	close(release)
	require.NoError(t, r.stop(t))
	assert.Equal(t, int32(2), started.Load())
}

func TestGracefulShutdownFinishesInFlightAndQueuedWork(t *testing.T) {
	gh := newFakeGitHub(t)
	cfg := testConfig(t, gh.URL)
	cfg.Workers = 1
	inHandler := make(chan struct{}, 2)
	results := make(chan string, 2)
	h := handlerFunc{events: []string{"push"}, fn: func(ctx context.Context, _, _ string, payload []byte) error {
		inHandler <- struct{}{}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
		results <- string(payload)
		return nil
	}}
	s, logs := newTestServer(t, cfg, WithHandlers(h))
	r := start(t, s)

	require.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sign(testSecret, pushPayload)))
	second := `{"n":2}`
	require.Equal(t, http.StatusOK, deliver(t, r.url, "push", second, sign(testSecret, second)))
	<-inHandler // the first event is in flight, the second is queued behind it

	require.NoError(t, r.stop(t), "shutdown waits for the work instead of failing")
	require.Len(t, results, 2, "both events completed before Run returned")
	assert.Equal(t, pushPayload, <-results)
	assert.Equal(t, second, <-results)
	assert.Contains(t, logs.String(), "shutdown complete")

	_, err := http.Get(r.url + "/healthz")
	assert.Error(t, err, "the listener is closed")
}

func TestShutdownTimeoutCancelsRemainingWork(t *testing.T) {
	gh := newFakeGitHub(t)
	cfg := testConfig(t, gh.URL)
	cfg.Server.ShutdownTimeout = config.Duration(100 * time.Millisecond)
	cancelled := make(chan error, 1)
	running := make(chan struct{})
	h := handlerFunc{events: []string{"push"}, fn: func(ctx context.Context, _, _ string, _ []byte) error {
		close(running)
		<-ctx.Done()
		cancelled <- ctx.Err()
		return ctx.Err()
	}}
	s, _ := newTestServer(t, cfg, WithHandlers(h))
	r := start(t, s)
	require.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sign(testSecret, pushPayload)))
	<-running

	err := r.stop(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "1 webhook event still queued or running")
	assert.ErrorIs(t, <-cancelled, context.Canceled, "left-over work is cancelled")
}

func TestHandlerPanicIsReported(t *testing.T) {
	gh := newFakeGitHub(t)
	h := handlerFunc{events: []string{"push"}, fn: func(context.Context, string, string, []byte) error {
		panic("boom")
	}}
	s, logs := newTestServer(t, testConfig(t, gh.URL), WithHandlers(h))
	r := start(t, s)
	require.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sign(testSecret, pushPayload)))
	require.NoError(t, r.stop(t))
	assert.Contains(t, logs.String(), "panic running delivery/0/")
	assert.Contains(t, logs.String(), ": boom")
	assert.Equal(t, int64(1), s.counter(MetricWebhooksFailed, "event", "push").Count())
	assert.Equal(t, int64(1), s.Registry().Get(labeled(MetricReconcileDuration, "trigger", "webhook", "outcome", "error")).(interface{ Count() int64 }).Count())
}

func TestResyncAtStartAndPeriodicallyNeverOverlapping(t *testing.T) {
	gh := newFakeGitHub(t)
	cfg := testConfig(t, gh.URL)
	cfg.Resync.Interval = config.Duration(time.Millisecond)
	var runs, active, maxActive atomic.Int32
	resync := func(ctx context.Context) error {
		n := active.Add(1)
		defer active.Add(-1)
		if n > maxActive.Load() {
			maxActive.Store(n)
		}
		time.Sleep(3 * time.Millisecond)
		if runs.Add(1)%2 == 0 {
			return errors.New("control plane unreachable")
		}
		return nil
	}
	s, logs := newTestServer(t, cfg, WithResync(resync))
	r := start(t, s)
	eventually(t, func() bool { return runs.Load() >= 4 }, "resync keeps running after errors")
	require.NoError(t, r.stop(t))
	after := runs.Load()
	time.Sleep(20 * time.Millisecond)

	assert.Equal(t, after, runs.Load(), "no resync after shutdown")
	assert.Equal(t, int32(1), maxActive.Load(), "never two at once")
	assert.Contains(t, logs.String(), "control plane unreachable")
}

func TestResyncRunsOnceWhenIntervalIsZero(t *testing.T) {
	gh := newFakeGitHub(t)
	var runs atomic.Int32
	s, _ := newTestServer(t, testConfig(t, gh.URL), WithResync(func(context.Context) error {
		runs.Add(1)
		return nil
	}))
	r := start(t, s)
	eventually(t, func() bool { return runs.Load() == 1 }, "resync at start")
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, r.stop(t))
	assert.Equal(t, int32(1), runs.Load())
}

func TestRunTwiceFails(t *testing.T) {
	gh := newFakeGitHub(t)
	s, _ := newTestServer(t, testConfig(t, gh.URL))
	r := start(t, s)
	assert.Error(t, s.Run(context.Background()))
	require.NoError(t, r.stop(t))
}

func TestOversizedPayload(t *testing.T) {
	gh := newFakeGitHub(t)
	s, _ := newTestServer(t, testConfig(t, gh.URL), WithHandlers(handlerFunc{events: []string{"push"}, fn: func(context.Context, string, string, []byte) error { return nil }}))
	big := `{"x":"` + strings.Repeat("a", maxPayloadBytes) + `"}`
	req, err := http.NewRequest(http.MethodPost, "/api/github/hook", bytes.NewBufferString(big))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature-256", sign(testSecret, big))
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
}
