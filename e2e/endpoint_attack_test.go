package e2e

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// getURL returns the status and body of a GET, or an error when nothing answers.
func getURL(url string) (int, string, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// readyz returns the status and body of /readyz on the management listener.
func (w *world) readyz() (int, string) {
	w.t.Helper()
	status, body, err := getURL("http://" + w.mgmt + "/readyz")
	require.NoError(w.t, err)
	return status, body
}

// rssSampler records the app's peak resident memory until stopped.
type rssSampler struct {
	peak atomic.Int64
	stop chan struct{}
	done chan error
}

func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			rss, err := processRSS(pid)
			if err != nil {
				s.done <- err
				return
			}
			if rss > s.peak.Load() {
				s.peak.Store(rss)
			}
			select {
			case <-s.stop:
				s.done <- nil
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) finish() (int64, error) {
	close(s.stop)
	return s.peak.Load(), <-s.done
}

const mib = 1 << 20

// Sixty 24 MB deliveries with a wrong signature arrive at once. At most
// server.maxConcurrentBodies (8) bodies are read; the others are answered 503 unread. The
// app's memory stays far below 512 MiB during and after, none of them is processed, and a
// genuine push afterwards is.
func TestE2ELargeUnsignedBodiesDoNotExhaustMemory(t *testing.T) {
	w := newWorld(t)
	w.start()
	pid := w.pid()
	before, err := processRSS(pid)
	require.NoError(t, err)
	received := strings.Count(w.logs.String(), `"Received webhook event"`)

	body := bytes.Repeat([]byte(`a`), 24*mib) // one buffer shared by every request
	forged := githubsim.Sign("not-the-secret", body)
	sampler := sampleRSS(pid)
	const attackers = 60
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	start := time.Now()
	for range attackers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequest(http.MethodPost, "http://"+w.addr+"/api/github/hook", bytes.NewReader(body))
			if err != nil {
				panic(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "push")
			req.Header.Set("X-Hub-Signature-256", forged)
			// A connection of its own, not marked "Connection: close": net/http then leaves
			// the client time to read the early 503 before resetting the connection.
			client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{}}
			resp, err := client.Do(req)
			outcome := "connection closed while sending"
			if err == nil {
				outcome = resp.Status
				resp.Body.Close()
			}
			mu.Lock()
			outcomes[outcome]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	attack := time.Since(start)
	time.Sleep(2 * time.Second) // after: the slot buffers are dropped once idle
	peak, err := sampler.finish()
	require.NoError(t, err)
	after, err := processRSS(pid)
	require.NoError(t, err)
	t.Logf("%d deliveries of 24 MiB in %s: %v; app RSS before %d MiB, peak %d MiB, 2 s after %d MiB",
		attackers, attack.Round(time.Millisecond), outcomes, before/mib, peak/mib, after/mib)

	require.Less(t, peak, int64(512*mib), "peak RSS")
	require.Less(t, after, int64(512*mib), "RSS after")
	require.Less(t, after, before+64*mib, "the memory is given back")
	for outcome, n := range outcomes {
		switch outcome {
		case "400 Bad Request", "503 Service Unavailable", "connection closed while sending":
		default:
			t.Fatalf("%d deliveries answered %s", n, outcome)
		}
	}
	require.NotZero(t, outcomes["400 Bad Request"], "some bodies were read and their signature checked")
	require.NotZero(t, outcomes["503 Service Unavailable"], "the others were refused unread")
	require.Equal(t, received, strings.Count(w.logs.String(), `"Received webhook event"`), "no forged delivery was accepted")

	status, _, err := getURL("http://" + w.addr + "/healthz")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("AfterTheFlood"))})
	require.Contains(t, w.tree("kalypso/dev")["large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: AfterTheFlood\n",
		"a signed push is still processed")
}

// Two hundred clients send their request headers one byte a second. With
// server.readHeaderTimeout at 2s, the app closes every connection after about 2 seconds,
// and answers other requests meanwhile.
func TestE2ESlowHeadersAreCutOff(t *testing.T) {
	const (
		conns   = 200
		timeout = 2 * time.Second
	)
	w := newWorld(t)
	w.start("KALYPSO_SERVER_READ_HEADER_TIMEOUT=2s")
	head := "POST /api/github/hook HTTP/1.1\r\nHost: kalypso\r\nContent-Type: application/json\r\nX-GitHub-Event: push\r\n"
	closedAfter := make(chan time.Duration, conns)
	var wg sync.WaitGroup
	for range conns {
		conn, err := net.Dial("tcp", w.addr)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			closed := make(chan struct{})
			go func() { // the server closes: the read ends (with EOF, or an error)
				defer close(closed)
				_ = conn.SetReadDeadline(start.Add(timeout + 3*time.Second))
				_, _ = io.Copy(io.Discard, conn)
				closedAfter <- time.Since(start)
			}()
			for i := 0; ; i++ {
				if _, err := conn.Write([]byte{head[i%len(head)]}); err != nil {
					break
				}
				select {
				case <-closed:
					return
				case <-time.After(time.Second):
				}
			}
			<-closed
		}()
	}
	time.Sleep(timeout / 2)
	status, _, err := getURL("http://" + w.addr + "/healthz")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, "the app answers during the attack")
	wg.Wait()
	close(closedAfter)
	var slowest time.Duration
	n := 0
	for d := range closedAfter {
		n++
		require.GreaterOrEqual(t, d, timeout-200*time.Millisecond, "closed by the header timeout, not before")
		require.Less(t, d, timeout+1500*time.Millisecond, "closed within the header timeout")
		slowest = max(slowest, d)
	}
	require.Equal(t, conns, n)
	t.Logf("%d slow connections closed, the last after %s", conns, slowest.Round(time.Millisecond))
}

// GitHub signs with SHA-256 and SHA-1; a delivery with only a valid SHA-1 signature is
// refused before its body is read, and not processed.
func TestE2ESHA1SignatureAloneIsRefused(t *testing.T) {
	w := newWorld(t)
	w.start()
	head := w.head("kalypso/dev")
	w.sim.DropWebhooks(true)
	sha := w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("SHA1"))})
	w.sim.DropWebhooks(false)
	d := w.pushDelivery(sha)

	mac := hmac.New(sha1.New, []byte(secret))
	mac.Write(d.Body)
	require.Equal(t, "sha1="+hex.EncodeToString(mac.Sum(nil)), d.Header.Get("X-Hub-Signature"), "the simulator signs with SHA-1 too")
	req, err := http.NewRequest(http.MethodPost, "http://"+w.addr+"/api/github/hook", bytes.NewReader(d.Body))
	require.NoError(t, err)
	req.Header = d.Header.Clone()
	req.Header.Del("X-Hub-Signature-256")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, string(msg), "X-Hub-Signature-256")

	w.settle()
	require.Zero(t, w.processed()[d.ID], "not processed")
	require.Empty(t, w.checks(sample.ControlPlane, sha, "dev"), "no check run")
	require.Equal(t, head, w.head("kalypso/dev"), "no commit")
	w.redeliver(d.ID) // with both signatures, as GitHub sends it
	require.NotNil(t, w.check(sample.ControlPlane, sha, "dev"), "the genuine delivery is processed")
}

// /metrics is served on the management listener only; the probes on both.
func TestE2EMetricsOnTheManagementListenerOnly(t *testing.T) {
	w := newWorld(t)
	w.start()
	status, _, err := getURL("http://" + w.addr + "/metrics")
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, status, "no /metrics on the public listener")
	status, body, err := getURL("http://" + w.mgmt + "/metrics")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "# TYPE kalypso_webhooks_received_total counter")
	require.Contains(t, body, "kalypso_github_installation_rate_limit_remaining{installation=")
	for _, addr := range []string{w.addr, w.mgmt} {
		status, body, err := getURL("http://" + addr + "/healthz")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status, addr)
		require.Equal(t, "ok", body)
		status, body, err = getURL("http://" + addr + "/readyz")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status, addr)
		require.Equal(t, "ready", body)
	}
	resp, err := http.Post("http://"+w.mgmt+"/api/github/hook", "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "no webhook endpoint on the management listener")
}

// /readyz is 503 until the first resync is done, 503 with the reason while GitHub fails,
// and 200 again once GitHub answers; /healthz stays 200 throughout.
func TestE2EReadyz(t *testing.T) {
	w := newWorld(t)
	// The first resync's first call fails once: the resync waits before its retry.
	w.sim.InjectFault(githubsim.Fault{Method: "GET", PathPattern: "/app/installations", Status: http.StatusBadGateway})
	w.launch()
	var status int
	var body string
	w.eventually(func() bool {
		var err error
		status, body, err = getURL("http://" + w.mgmt + "/readyz")
		return err == nil
	}, "the management listener answers")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, body, "first resync not completed")
	w.eventually(func() bool { status, _ := w.readyz(); return status == http.StatusOK }, "ready after the first resync")
	require.Contains(t, w.logs.String(), `"resync done"`)

	// GitHub fails every API call while a push is processed.
	w.sim.InjectFault(githubsim.Fault{Status: http.StatusBadGateway, Times: 100000})
	_, err := w.sim.CommitFiles(sample.Owner, sample.ControlPlane, "dev",
		map[string]*string{"configs/dev-config.yaml": str(devConfig("Outage"))}, "change")
	require.NoError(t, err)
	w.eventually(func() bool { status, _ := w.readyz(); return status == http.StatusServiceUnavailable }, "not ready while GitHub fails")
	status, body = w.readyz()
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, body, "GitHub unreachable")
	require.Contains(t, body, "502 Bad Gateway")
	status, _, err = getURL("http://" + w.addr + "/healthz")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, "alive all the same")

	w.sim.ClearFaults()
	deadline := time.Now().Add(5 * time.Second)
	for status, body = w.readyz(); status != http.StatusOK; status, body = w.readyz() {
		if time.Now().After(deadline) {
			t.Fatalf("still not ready 5s after GitHub recovered: %s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.settle()
}
