package app

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// limitedServer serves h on a loopback listener limited to max connections.
func limitedServer(t *testing.T, max int, h http.Handler) (string, *atomic.Int32, *connLimiter) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var evicted atomic.Int32
	l := limitConnections(ln, max, func() { evicted.Add(1) })
	srv := &http.Server{Handler: h, ConnState: l.connState, ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), &evicted, l
}

// unfinished opens a connection that sends part of its headers and nothing more.
func unfinished(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.Write([]byte("POST /api/github/hook HTTP/1.1\r\nHost: kalypso\r\nX-Pad: aaaa"))
	require.NoError(t, err)
	return c
}

// freshGet sends a GET on a new connection and returns its status.
func freshGet(addr string) (int, error) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// closedByServer reports whether the server closed c: a read ends at once with EOF.
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := c.Read(make([]byte, 1))
	return n == 0 && err == io.EOF
}

func TestConnLimiterGivesTheOldestUnfinishedConnectionsPlace(t *testing.T) {
	addr, evicted, l := limitedServer(t, 2, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	open := func(n int) {
		require.Eventually(t, func() bool {
			l.mu.Lock()
			defer l.mu.Unlock()
			return len(l.conns) == n
		}, 10*time.Second, time.Millisecond, "%d connections open", n)
	}
	first := unfinished(t, addr)
	open(1)
	second := unfinished(t, addr)
	open(2)
	status, err := freshGet(addr)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, "a request is served although every connection was taken")
	require.True(t, closedByServer(first), "the oldest unfinished connection made room")
	require.Equal(t, int32(1), evicted.Load())

	open(1)
	unfinished(t, addr)
	open(2)
	status, err = freshGet(addr)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	require.True(t, closedByServer(second), "then the next oldest")
	require.Equal(t, int32(2), evicted.Load())
}

func TestConnLimiterWaitsWhenEveryConnectionServesARequest(t *testing.T) {
	release := make(chan struct{})
	var released, servedAfterRelease atomic.Bool
	started := make(chan struct{}, 3)
	addr, evicted, l := limitedServer(t, 2, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			started <- struct{}{}
			<-release
			return
		}
		servedAfterRelease.Store(released.Load())
	}))
	slow := make(chan error, 2)
	for range 2 {
		go func() {
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := client.Get("http://" + addr + "/slow")
			if err == nil {
				resp.Body.Close()
			}
			slow <- err
		}()
	}
	<-started
	<-started
	quick := make(chan error, 1)
	go func() {
		_, err := freshGet(addr)
		quick <- err
	}()
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.waiting == 1
	}, 10*time.Second, time.Millisecond, "the third connection waits for room")
	released.Store(true)
	close(release)
	require.NoError(t, <-quick)
	require.True(t, servedAfterRelease.Load(), "served once a request ended, not before")
	require.NoError(t, <-slow)
	require.NoError(t, <-slow)
	require.Zero(t, evicted.Load(), "a connection serving a request is never closed to make room")
}

func TestConnLimiterCloseWakesAWaitingAccept(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := limitConnections(ln, 1, func() {})
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	first, err := l.Accept()
	require.NoError(t, err)
	defer first.Close()
	l.connState(first, http.StateActive) // busy: nothing can make room
	c2, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c2.Close()
	done := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		done <- err
	}()
	require.NoError(t, l.Close())
	require.ErrorIs(t, <-done, net.ErrClosed)
}

// pipeListener accepts the server ends of the pipes given to it.
type pipeListener struct{ conns chan net.Conn }

func (p pipeListener) Accept() (net.Conn, error) { return <-p.conns, nil }
func (p pipeListener) Close() error              { return nil }
func (p pipeListener) Addr() net.Addr            { return &net.TCPAddr{} }

// TestConnLimiterKeepsTheOrderOfAcceptance checks that the oldest spare connection is the one
// accepted first, even when the server reports the new connections' states in another order
// (each from its own goroutine).
func TestConnLimiterKeepsTheOrderOfAcceptance(t *testing.T) {
	ln := pipeListener{conns: make(chan net.Conn, 3)}
	l := limitConnections(ln, 2, func() {})
	var accepted []net.Conn
	for range 2 {
		server, client := net.Pipe()
		t.Cleanup(func() { _ = client.Close() })
		ln.conns <- server
		c, err := l.Accept()
		require.NoError(t, err)
		accepted = append(accepted, c)
	}
	l.connState(accepted[1], http.StateNew)
	l.connState(accepted[0], http.StateNew) // reported last, accepted first
	server, client := net.Pipe()
	t.Cleanup(func() { _ = client.Close() })
	ln.conns <- server
	_, err := l.Accept()
	require.NoError(t, err)
	l.mu.Lock()
	defer l.mu.Unlock()
	require.NotContains(t, l.conns, accepted[0], "the first accepted made room")
	require.Contains(t, l.conns, accepted[1])
}
