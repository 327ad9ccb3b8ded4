package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/syncbuf"
)

// replicaHeader marks the GitHub calls of one replica (set by its proxy), so that a fault of
// the simulator can select them.
const replicaHeader = "X-Replica"

// replica is one `kalypso serve` of a cluster, reaching GitHub through a proxy of its own.
type replica struct {
	name       string
	addr, mgmt string
	github     *httptest.Server
	proc       *appProcess
	out        *lineWriter
}

// cluster is several replicas of the app behind a balancer, as a Kubernetes Service balances
// a Deployment's pods: each delivery goes to one replica, round robin unless the test routes it.
type cluster struct {
	w        *world
	replicas []*replica
	lb       *httptest.Server
	mu       sync.Mutex
	next     int
	route    func(body []byte) int // a replica's index, or -1 for round robin
	sentTo   map[string]int        // delivery → the replica that answered it
	extraEnv []string
}

// newCluster makes n replicas (a, b, …) behind a balancer the simulator delivers to; none is
// started yet. extraEnv is given to every replica.
func newCluster(w *world, n int, extraEnv ...string) *cluster {
	w.t.Helper()
	c := &cluster{w: w, sentTo: map[string]int{}, extraEnv: extraEnv}
	w.cluster = c
	simURL, err := url.Parse(w.sim.URL())
	require.NoError(w.t, err)
	for i := range n {
		r := &replica{name: string(rune('a' + i)), addr: freeAddr(w.t), mgmt: freeAddr(w.t), out: &lineWriter{to: w.logs}}
		proxy := httputil.NewSingleHostReverseProxy(simURL)
		proxy.FlushInterval = -1
		director := proxy.Director
		proxy.Director = func(req *http.Request) {
			director(req)
			req.Header.Set(replicaHeader, r.name)
		}
		r.github = httptest.NewServer(proxy)
		w.t.Cleanup(r.github.Close)
		c.replicas = append(c.replicas, r)
	}
	c.lb = httptest.NewServer(http.HandlerFunc(c.balance))
	w.t.Cleanup(c.lb.Close)
	w.sim.SetWebhook(c.lb.URL+"/api/github/hook", secret)
	w.t.Cleanup(func() {
		for i := range c.replicas {
			c.stop(i)
		}
	})
	return c
}

// balance forwards a delivery to one replica and answers what it answered.
func (c *cluster) balance(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	i := -1
	if c.route != nil {
		i = c.route(body)
	}
	if i < 0 {
		i = c.next % len(c.replicas)
		c.next++
	}
	c.sentTo[r.Header.Get("X-GitHub-Delivery")] = i
	target := c.replicas[i].addr
	c.mu.Unlock()
	req, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+target+r.URL.Path, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// routeTo sends the deliveries whose body contains a text to a replica, and the others round
// robin; nil texts route everything round robin again.
func (c *cluster) routeTo(rules map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rules == nil {
		c.route = nil
		return
	}
	c.route = func(body []byte) int {
		for text, i := range rules {
			if bytes.Contains(body, []byte(text)) {
				return i
			}
		}
		return -1
	}
}

// start launches replica i and waits until it listens and its first resync is done.
func (c *cluster) start(i int, extraEnv ...string) {
	w, r := c.w, c.replicas[i]
	w.t.Helper()
	done0 := strings.Count(w.logs.String(), `"resync done"`)
	env := w.serveEnv(r.addr, r.mgmt, r.github.URL+"/api/v3/", r.github.URL)
	r.proc = w.serve(env, r.out, append(append([]string{}, c.extraEnv...), extraEnv...)...)
	w.eventually(func() bool { return strings.Count(w.logs.String(), `"resync done"`) > done0 }, "replica "+r.name+" finishes its first resync")
}

// startAll starts every replica, one after the other.
func (c *cluster) startAll() {
	for i := range c.replicas {
		c.start(i)
	}
}

// stop ends replica i gracefully (SIGTERM), if it runs.
func (c *cluster) stop(i int) {
	r := c.replicas[i]
	if r.proc == nil {
		return
	}
	r.proc.stop()
	r.proc = nil
}

// kill ends replica i abruptly (SIGKILL): the deliveries it accepted and had not processed
// are lost, as they would be.
func (c *cluster) kill(i int) {
	r := c.replicas[i]
	require.NotNil(c.w.t, r.proc, "replica %s is not running", r.name)
	_ = r.proc.cmd.Process.Kill()
	<-r.proc.done
	r.proc = nil
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w.markLost(func(id string) bool { j, ok := c.sentTo[id]; return ok && j == i })
}

// waitProcessed waits until the app has processed the newest push delivery of commit sha.
func (c *cluster) waitProcessed(sha string) {
	w := c.w
	w.t.Helper()
	id := w.pushDelivery(sha).ID
	w.eventually(func() bool { return w.processed()[id] >= 1 }, fmt.Sprintf("the push of %s is processed", sha[:7]))
}

// noRaces fails the test if a replica built with the race detector reported a data race, or
// if a replica crashed (the harness prints the logs of a failed test).
func noRaces(t testing.TB, w *world) {
	t.Helper()
	logs := w.logs.String()
	for _, bad := range []string{"WARNING: DATA RACE", "panic:", "fatal error:", "assignment to entry in nil map"} {
		if strings.Contains(logs, bad) {
			t.Fatalf("a replica logged %q", bad)
		}
	}
}

// lineWriter writes whole lines to a shared buffer, so that the output of several processes
// interleaves line by line.
type lineWriter struct {
	mu      sync.Mutex
	to      *syncbuf.Buffer
	partial []byte
}

// Write implements io.Writer.
func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	if i := bytes.LastIndexByte(l.partial, '\n'); i >= 0 {
		_, _ = l.to.Write(l.partial[:i+1])
		l.partial = append([]byte(nil), l.partial[i+1:]...)
	}
	return len(p), nil
}
