package app

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/config"
)

// rawConn opens a TCP connection to the host of baseURL.
func rawConn(t *testing.T, baseURL string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(baseURL, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// hookHeaders is the head of a webhook POST; extra lines end with \r\n.
func hookHeaders(event string, contentLength int, extra string) string {
	return fmt.Sprintf("POST /api/github/hook HTTP/1.1\r\nHost: kalypso\r\nContent-Type: application/json\r\n"+
		"X-GitHub-Event: %s\r\nX-GitHub-Delivery: raw-%s\r\nContent-Length: %d\r\n%s\r\n", event, rand.Text(), contentLength, extra)
}

// readResponse reads one response from conn within two seconds.
func readResponse(t *testing.T, conn net.Conn) *http.Response {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(2*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp
}

// signSHA1 returns a valid X-Hub-Signature (SHA-1) value.
func signSHA1(secret, body string) string {
	mac := hmac.New(sha1.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha1=" + hex.EncodeToString(mac.Sum(nil))
}

// get returns the status and body of a GET.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// pushCounter is a push handler that counts its calls.
func pushCounter(calls *atomic.Int32) handlerFunc {
	return handlerFunc{events: []string{"push"}, fn: func(context.Context, string, string, []byte) error {
		calls.Add(1)
		return nil
	}}
}

func TestOnlySHA256SignatureIsAcceptedAndCheckedBeforeReading(t *testing.T) {
	gh := newFakeGitHub(t)
	var calls atomic.Int32
	s, _ := newTestServer(t, testConfig(t, gh.URL), WithHandlers(pushCounter(&calls)))
	r := start(t, s)

	// A valid SHA-1 signature alone is refused before the body is read: the body is never sent.
	conn := rawConn(t, r.url)
	_, err := io.WriteString(conn, hookHeaders("push", len(pushPayload), "X-Hub-Signature: "+signSHA1(testSecret, pushPayload)+"\r\n"))
	require.NoError(t, err)
	resp := readResponse(t, conn)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	body, _ := io.ReadAll(resp.Body)
	assert.Contains(t, string(body), "X-Hub-Signature-256")

	// Malformed SHA-256 values are refused the same way.
	for _, sig := range []string{"sha256=zz", "sha1=" + strings.Repeat("0", 40), "sha256=" + strings.Repeat("0", 63), strings.Repeat("0", 64)} {
		conn := rawConn(t, r.url)
		_, err := io.WriteString(conn, hookHeaders("push", 1000, "X-Hub-Signature-256: "+sig+"\r\n"))
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, readResponse(t, conn).StatusCode, sig)
	}

	// Through a client too, with the whole body: still refused, never processed.
	req, err := http.NewRequest(http.MethodPost, r.url+"/api/github/hook", strings.NewReader(pushPayload))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature", signSHA1(testSecret, pushPayload))
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// GitHub sends both headers: the SHA-256 one decides, whatever the SHA-1 one says.
	req, err = http.NewRequest(http.MethodPost, r.url+"/api/github/hook", strings.NewReader(pushPayload))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature", "sha1="+strings.Repeat("0", 40))
	req.Header.Set("X-Hub-Signature-256", sign(testSecret, pushPayload))
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, r.stop(t))
	assert.Equal(t, int32(1), calls.Load(), "only the SHA-256-signed delivery is processed")
	assert.Equal(t, int64(6), s.counter(MetricWebhooksRejected, "reason", RejectSignature).Count())
}

func TestFormEncodedDeliveryIsAccepted(t *testing.T) {
	gh := newFakeGitHub(t)
	got := make(chan string, 1)
	h := handlerFunc{events: []string{"push"}, fn: func(_ context.Context, _, _ string, payload []byte) error {
		got <- string(payload)
		return nil
	}}
	s, _ := newTestServer(t, testConfig(t, gh.URL), WithHandlers(h))
	r := start(t, s)
	body := "payload=" + strings.NewReplacer("{", "%7B", "}", "%7D", `"`, "%22", ":", "%3A", ",", "%2C", "/", "%2F").Replace(pushPayload)
	req, err := http.NewRequest(http.MethodPost, r.url+"/api/github/hook", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature-256", sign(testSecret, body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, pushPayload, <-got)
}

func TestOversizedBodyIsRefused(t *testing.T) {
	gh := newFakeGitHub(t)
	var calls atomic.Int32
	s, _ := newTestServer(t, testConfig(t, gh.URL), WithHandlers(pushCounter(&calls)))
	r := start(t, s)

	// Content-Length over 25 MB: 413 at once, nothing read.
	conn := rawConn(t, r.url)
	_, err := io.WriteString(conn, hookHeaders("push", maxPayloadBytes+1, "X-Hub-Signature-256: "+sign(testSecret, "x")+"\r\n"))
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestEntityTooLarge, readResponse(t, conn).StatusCode)

	// Exactly 25 MB is read (and here refused for its signature).
	big := bytes.Repeat([]byte("a"), maxPayloadBytes)
	req, err := http.NewRequest(http.MethodPost, r.url+"/api/github/hook", bytes.NewReader(big))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature-256", sign("wrong", "x"))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// A chunked body (no Content-Length) is cut one byte past 25 MB.
	big = append(big, 'a')
	req, err = http.NewRequest(http.MethodPost, r.url+"/api/github/hook", struct{ io.Reader }{bytes.NewReader(big)})
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature-256", sign(testSecret, string(big)))
	resp, err = http.DefaultClient.Do(req)
	if err == nil { // the server may close before the client has written everything
		resp.Body.Close()
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	}
	require.NoError(t, r.stop(t))
	assert.Zero(t, calls.Load())
	assert.Equal(t, int64(2), s.counter(MetricWebhooksRejected, "reason", RejectTooLarge).Count())
}

func TestBodiesInFlightAtTheBoundAnswer503Unread(t *testing.T) {
	gh := newFakeGitHub(t)
	cfg := testConfig(t, gh.URL)
	cfg.Server.MaxConcurrentBodies = 2
	var calls atomic.Int32
	s, _ := newTestServer(t, cfg, WithHandlers(pushCounter(&calls)))
	r := start(t, s)

	// Two deliveries send half their body and stall: both slots are taken.
	var stalled []net.Conn
	for range 2 {
		conn := rawConn(t, r.url)
		_, err := io.WriteString(conn, hookHeaders("push", len(pushPayload), "X-Hub-Signature-256: "+sign(testSecret, pushPayload)+"\r\n")+pushPayload[:10])
		require.NoError(t, err)
		stalled = append(stalled, conn)
	}
	eventually(t, func() bool { return s.webhook.bodies.inUseCount() == 2 }, "both slots taken")

	// The next one is answered 503 at once, its body never sent.
	conn := rawConn(t, r.url)
	_, err := io.WriteString(conn, hookHeaders("push", 20<<20, "X-Hub-Signature-256: "+sign(testSecret, pushPayload)+"\r\n"))
	require.NoError(t, err)
	resp := readResponse(t, conn)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.True(t, resp.Close, "the connection is not kept with an unread body")
	assert.Equal(t, int64(1), s.counter(MetricWebhooksRejected, "reason", RejectBusy).Count())

	// The stalled ones finish and are processed; the slots are free again.
	for _, c := range stalled {
		_, err := io.WriteString(c, pushPayload[10:])
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, readResponse(t, c).StatusCode)
	}
	assert.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sign(testSecret, pushPayload)))
	require.NoError(t, r.stop(t))
	assert.Equal(t, int32(3), calls.Load())
}

func TestSlowConnectionsAreClosed(t *testing.T) {
	gh := newFakeGitHub(t)
	cfg := testConfig(t, gh.URL)
	cfg.Server.ReadHeaderTimeout = config.Duration(200 * time.Millisecond)
	cfg.Server.ReadTimeout = config.Duration(400 * time.Millisecond)
	cfg.Server.IdleTimeout = config.Duration(300 * time.Millisecond)
	cfg.Server.MaxConcurrentBodies = 1
	var calls atomic.Int32
	s, _ := newTestServer(t, cfg, WithHandlers(pushCounter(&calls)))
	r := start(t, s)

	// closedWithin reads until the server closes conn and returns how long it took.
	closedWithin := func(conn net.Conn, limit time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		require.NoError(t, conn.SetReadDeadline(start.Add(limit)))
		_, err := io.Copy(io.Discard, conn)
		require.NoError(t, err, "the server closed the connection within %s", limit)
		return time.Since(start)
	}

	t.Run("headers sent too slowly", func(t *testing.T) {
		for _, base := range []string{r.url, r.mgmt} {
			conn := rawConn(t, base)
			_, err := io.WriteString(conn, "POST /api/github/hook HTTP/1.1\r\nHost: k")
			require.NoError(t, err)
			elapsed := closedWithin(conn, 2*time.Second)
			assert.GreaterOrEqual(t, elapsed, 150*time.Millisecond, base)
			assert.Less(t, elapsed, time.Second, base)
		}
	})
	t.Run("body sent too slowly", func(t *testing.T) {
		conn := rawConn(t, r.url)
		_, err := io.WriteString(conn, hookHeaders("push", len(pushPayload), "X-Hub-Signature-256: "+sign(testSecret, pushPayload)+"\r\n")+pushPayload[:10])
		require.NoError(t, err)
		closedWithin(conn, 2*time.Second)
		// Its body slot is free again: the only one.
		assert.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sign(testSecret, pushPayload)))
	})
	t.Run("idle keep-alive connection", func(t *testing.T) {
		conn := rawConn(t, r.url)
		_, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: k\r\n\r\n")
		require.NoError(t, err)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		start := time.Now()
		require.NoError(t, conn.SetReadDeadline(start.Add(2*time.Second)))
		_, err = io.Copy(io.Discard, br)
		require.NoError(t, err)
		assert.Less(t, time.Since(start), time.Second)
	})
	require.NoError(t, r.stop(t))
	assert.Equal(t, int32(1), calls.Load())
}

func TestLargeBodiesReuseTheSlotBuffers(t *testing.T) {
	gh := newFakeGitHub(t)
	cfg := testConfig(t, gh.URL)
	cfg.Server.MaxConcurrentBodies = 2
	s, _ := newTestServer(t, cfg)
	r := start(t, s)
	var trimmed atomic.Int32
	s.webhook.bodies.returnMemory = func() { trimmed.Add(1) }

	body := bytes.Repeat([]byte("x"), 4<<20)
	post := func() {
		req, err := http.NewRequest(http.MethodPost, r.url+"/api/github/hook", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "push")
		req.Header.Set("X-Hub-Signature-256", sign("not the secret", "x"))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	}
	post() // warm up: one slot buffer allocated
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		post()
	}
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(3*len(body)), "20 bodies of 4 MiB allocated %d bytes: the slot buffers are reused", allocated)

	bodies := s.webhook.bodies
	require.GreaterOrEqual(t, bodies.buffered(), len(body))
	eventually(t, func() bool { return bodies.buffered() == 0 }, "large buffers dropped once idle")
	assert.Equal(t, int32(1), trimmed.Load(), "memory returned once")
	require.NoError(t, r.stop(t))
}

func TestBodySlotRead(t *testing.T) {
	slot := &bodySlot{limit: 100 << 10}
	// Unknown length: grows past the first buffer, up to the limit.
	body, err := slot.read(struct{ io.Reader }{bytes.NewReader(bytes.Repeat([]byte("b"), 70<<10))}, -1)
	require.NoError(t, err)
	assert.Len(t, body, 70<<10)
	body, err = slot.read(struct{ io.Reader }{bytes.NewReader(bytes.Repeat([]byte("b"), 100<<10))}, -1)
	require.NoError(t, err)
	assert.Len(t, body, 100<<10)
	_, err = slot.read(struct{ io.Reader }{bytes.NewReader(bytes.Repeat([]byte("b"), 100<<10+1))}, -1)
	var tooLarge *http.MaxBytesError
	assert.ErrorAs(t, err, &tooLarge)
	// Known length: read exactly, into the kept buffer.
	kept := cap(slot.buf)
	body, err = slot.read(strings.NewReader("hello"), 5)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(body))
	assert.Equal(t, kept, cap(slot.buf))
	_, err = slot.read(strings.NewReader("hel"), 5)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, err = slot.read(strings.NewReader(""), 100<<10+1)
	assert.ErrorAs(t, err, &tooLarge)
}

func TestManagementListener(t *testing.T) {
	gh := newFakeGitHub(t)
	s, _ := newTestServer(t, testConfig(t, gh.URL))
	r := start(t, s)
	require.NotEqual(t, s.Addr(), s.ManagementAddr())

	status, _ := get(t, r.url+"/metrics")
	assert.Equal(t, http.StatusNotFound, status, "no metrics on the public listener")
	status, body := get(t, r.mgmt+"/metrics")
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "# TYPE ")
	for _, base := range []string{r.url, r.mgmt} {
		status, body := get(t, base+"/healthz")
		assert.Equal(t, http.StatusOK, status, base)
		assert.Equal(t, "ok", body)
		eventually(t, func() bool { status, _ := get(t, base+"/readyz"); return status == http.StatusOK }, "ready on "+base)
	}
	resp, err := http.Post(r.mgmt+"/api/github/hook", "application/json", strings.NewReader(pushPayload))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "no webhook endpoint on the management listener")
	require.NoError(t, r.stop(t))
}

func TestManagementAddressInUse(t *testing.T) {
	gh := newFakeGitHub(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	cfg := testConfig(t, gh.URL)
	cfg.Server.ManagementAddress = busy.Addr().String()
	s, _ := newTestServer(t, cfg)
	err = s.Run(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "server.managementAddress")
}

// readyz returns the status and body of /readyz on the management listener.
func readyz(t *testing.T, r *running) (int, string) {
	t.Helper()
	return get(t, r.mgmt+"/readyz")
}

func TestReadyzTransitions(t *testing.T) {
	gh := newFakeGitHub(t)
	release := make(chan struct{})
	s, _ := newTestServer(t, testConfig(t, gh.URL), WithResync(func(ctx context.Context) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}))
	r := start(t, s)

	// Before the first resync.
	status, body := readyz(t, r)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Contains(t, body, "first resync not completed")
	eventually(t, func() bool { _, body := readyz(t, r); return !strings.Contains(body, "authenticated") }, "GET /app at start authenticates")
	assert.GreaterOrEqual(t, gh.appRequests.Load(), int32(1))
	status, _ = readyz(t, r)
	assert.Equal(t, http.StatusServiceUnavailable, status, "still resyncing")

	// After it.
	close(release)
	eventually(t, func() bool { status, _ := readyz(t, r); return status == http.StatusOK }, "ready after the first resync")
	status, body = get(t, r.url+"/readyz")
	assert.Equal(t, http.StatusOK, status, "on the public listener too")
	assert.Equal(t, "ready", body)

	for _, failure := range []int{http.StatusBadGateway, http.StatusUnauthorized} {
		// GitHub fails: fewer than three failed requests in a row are tolerated.
		gh.failWith.Store(int32(failure))
		for i := range githubFailureThreshold {
			status, _ := readyz(t, r)
			assert.Equal(t, http.StatusOK, status, "after %d failures", i)
			_, err := s.InstallationToken(context.Background(), int64(100+i))
			require.Error(t, err)
		}
		status, body = readyz(t, r)
		assert.Equal(t, http.StatusServiceUnavailable, status)
		assert.Contains(t, body, "GitHub unreachable: the last 3 GitHub API requests failed")
		assert.Contains(t, body, fmt.Sprint(failure))
		assert.Equal(t, http.StatusOK, mustStatus(t, r.url+"/healthz"), "liveness is unaffected")

		// GitHub is back: /readyz checks GET /app itself and turns ready again.
		gh.failWith.Store(0)
		require.Eventually(t, func() bool { status, _ := readyz(t, r); return status == http.StatusOK }, 5*time.Second, 10*time.Millisecond, "ready when GitHub answers again")
	}

	// A transport error counts as a failure too.
	s.readiness.record(httpRequest("GET", gh.URL+"/api/v3/app"), nil, fmt.Errorf("dial tcp: connection refused"))
	s.readiness.record(httpRequest("GET", gh.URL+"/api/v3/app"), nil, fmt.Errorf("dial tcp: connection refused"))
	s.readiness.record(httpRequest("GET", gh.URL+"/api/v3/app"), nil, context.DeadlineExceeded)
	assert.Contains(t, strings.Join(s.readiness.reasons(), "; "), "GET /api/v3/app: context deadline exceeded")
	// A cancelled request says nothing; any other answer (404 here) shows GitHub is reachable.
	s.readiness.record(httpRequest("GET", gh.URL+"/api/v3/x"), nil, context.Canceled)
	assert.NotEmpty(t, s.readiness.reasons())
	s.readiness.record(httpRequest("GET", gh.URL+"/api/v3/x"), &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found"}, nil)
	assert.Empty(t, s.readiness.reasons())
	require.NoError(t, r.stop(t))
}

func httpRequest(method, url string) *http.Request {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		panic(err)
	}
	return req
}

func mustStatus(t *testing.T, url string) int {
	t.Helper()
	status, _ := get(t, url)
	return status
}

func TestReadyzUntilAuthenticated(t *testing.T) {
	gh := newFakeGitHub(t)
	gh.failWith.Store(http.StatusUnauthorized) // a wrong App ID or key
	s, _ := newTestServer(t, testConfig(t, gh.URL))
	r := start(t, s)
	eventually(t, func() bool {
		_, body := readyz(t, r)
		return strings.Contains(body, "not yet authenticated as the GitHub App") && strings.Contains(body, "GET /app answered 401")
	}, "the failed App check is the reason")
	assert.Equal(t, http.StatusOK, mustStatus(t, r.url+"/healthz"))
	status, body := readyz(t, r)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.NotContains(t, body, "resync", "no resync configured: nothing to wait for")

	gh.failWith.Store(0)
	require.Eventually(t, func() bool { status, _ := readyz(t, r); return status == http.StatusOK }, 5*time.Second, 10*time.Millisecond, "ready once authenticated")
	require.NoError(t, r.stop(t))
}

func TestReadyzWhileShuttingDown(t *testing.T) {
	gh := newFakeGitHub(t)
	running := make(chan struct{})
	release := make(chan struct{})
	h := handlerFunc{events: []string{"push"}, fn: func(context.Context, string, string, []byte) error {
		close(running)
		<-release
		return nil
	}}
	s, _ := newTestServer(t, testConfig(t, gh.URL), WithHandlers(h))
	r := start(t, s)
	eventually(t, func() bool { status, _ := readyz(t, r); return status == http.StatusOK }, "ready")
	require.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sign(testSecret, pushPayload)))
	<-running
	r.cancel()
	eventually(t, func() bool { _, body := readyz(t, r); return strings.Contains(body, "shutting down") }, "not ready while draining")
	assert.Equal(t, http.StatusOK, mustStatus(t, r.mgmt+"/healthz"), "the management listener serves until the work is done")
	close(release)
	require.NoError(t, r.stop(t))
	_, err := http.Get(r.mgmt + "/healthz")
	assert.Error(t, err, "then it closes")
}
