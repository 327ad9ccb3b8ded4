package e2e

import (
	"bytes"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/config"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// partialHeaders opens n connections to addr, at most 256 at a time, each sending a request
// line and pad bytes of one header, never the blank line that ends the headers. It returns
// the connections it opened, to be closed by the caller, and how many could not be opened or
// written (the listener's queue was full).
func partialHeaders(addr string, n, pad int) ([]net.Conn, int) {
	head := []byte("POST /api/github/hook HTTP/1.1\r\nHost: kalypso\r\nX-Pad: " + strings.Repeat("a", pad))
	var mu sync.Mutex
	var conns []net.Conn
	failed := 0
	work := make(chan struct{})
	var wg sync.WaitGroup
	for range 256 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				c, err := net.DialTimeout("tcp", addr, 10*time.Second)
				if err == nil {
					_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
					_, err = c.Write(head)
				}
				mu.Lock()
				if c != nil {
					conns = append(conns, c)
				}
				if err != nil {
					failed++
				}
				mu.Unlock()
			}
		}()
	}
	for range n {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	return conns, failed
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		_ = c.Close()
	}
}

// Anonymous clients open connections and send headers they never finish: first 10,000
// connections with 60 KiB each (more than server.maxHeaderBytes: refused with 431), then
// twice server.maxConnections connections with headers just under the limit, which the app
// would wait for until server.readHeaderTimeout (here a minute). A signed webhook sent on a
// new connection while they hold every connection is served at once: it takes the place of
// the oldest unfinished one. The app's peak memory stays under the documented bound, and
// the next webhook after the attack is served too.
func TestE2EUnfinishedHeadersTakeBoundedMemory(t *testing.T) {
	w := newWorld(t)
	w.start("KALYPSO_SERVER_READ_HEADER_TIMEOUT=1m", "KALYPSO_SERVER_READ_TIMEOUT=1m", "KALYPSO_SERVER_WRITE_TIMEOUT=2m")
	pid := w.pid()
	before, err := processRSS(pid)
	require.NoError(t, err)

	conns, failed := partialHeaders(w.addr, 10_000, 60<<10)
	t.Logf("10,000 connections with 60 KiB of headers: %d could not be opened or written", failed)
	closeAll(conns)

	w.sim.DropWebhooks(true)
	sha := w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("UnderSiege"))})
	w.sim.DropWebhooks(false)
	req, err := http.NewRequest(http.MethodPost, "http://"+w.addr+"/api/github/hook", bytes.NewReader(w.pushDelivery(sha).Body))
	require.NoError(t, err)
	req.Header = w.pushDelivery(sha).Header.Clone()

	held, failed := partialHeaders(w.addr, 2*config.DefaultMaxConnections, config.DefaultMaxHeaderBytes-512)
	t.Cleanup(func() { closeAll(held) })
	t.Logf("%d connections with headers just under the limit: %d could not be opened or written", len(held), failed)
	start := time.Now()
	fresh := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}} // a new connection, as a new delivery
	resp, err := fresh.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the signed webhook is accepted during the attack")
	t.Logf("the signed webhook was answered after %s", time.Since(start).Round(time.Millisecond))
	w.eventually(func() bool {
		return strings.Contains(w.tree("kalypso/dev")["large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: UnderSiege\n")
	}, "the webhook sent during the attack is processed")
	closeAll(held)

	w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("AfterTheSiege"))})
	require.Contains(t, w.tree("kalypso/dev")["large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: AfterTheSiege\n",
		"the next webhook is served too")
	peak, err := peakRSS(pid)
	require.NoError(t, err)
	t.Logf("app RSS before %d MiB, peak %d MiB", before/mib, peak/mib)
	require.Less(t, peak, before+attackBound, "peak RSS within the documented bound")
}

// attackBound is the documented bound of the memory clients that never finish their headers
// can take with the default settings (docs/security.md): server.maxConnections ×
// (4 × server.maxHeaderBytes + 64 KiB).
const attackBound = config.DefaultMaxConnections * (4*config.DefaultMaxHeaderBytes + 64<<10)
