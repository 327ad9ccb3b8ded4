// Package e2e drives the real kalypso binary through a simulated GitHub, scenario by scenario.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kalypso-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "kalypso")
	build := exec.Command("go", "build", "-o", binary, "../cmd/kalypso")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build kalypso:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const secret = "e2e-webhook-secret"

// world is a simulated GitHub seeded with the sample, and the app running against it.
type world struct {
	t      *testing.T
	sim    *githubsim.Server
	seeded *sample.Seeded
	addr   string
	cache  string
	app    *appProcess
}

// newWorld seeds the simulator; the app is not started yet.
func newWorld(t *testing.T) *world {
	t.Helper()
	sim, err := githubsim.New(githubsim.Options{Dir: filepath.Join(t.TempDir(), "github")})
	require.NoError(t, err)
	require.NoError(t, sim.Start())
	t.Cleanup(func() { sim.Close() })
	seeded, err := sample.Seed(sim, sample.Owner)
	require.NoError(t, err)
	w := &world{t: t, sim: sim, seeded: seeded, addr: freeAddr(t), cache: filepath.Join(t.TempDir(), "cache")}
	sim.SetWebhook("http://"+w.addr+"/api/github/hook", secret)
	return w
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// appProcess is a running `kalypso serve`.
type appProcess struct {
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan error
}

// start runs `kalypso serve` with settings from the environment and waits until it listens
// and its first resync is done.
func (w *world) start(extraEnv ...string) {
	w.t.Helper()
	keyFile := filepath.Join(w.t.TempDir(), "key.pem")
	require.NoError(w.t, os.WriteFile(keyFile, w.sim.PrivateKeyPEM(), 0o600))
	cmd := exec.Command(binary, "serve")
	cmd.Env = append(os.Environ(),
		"KALYPSO_SERVER_ADDRESS="+w.addr,
		"KALYPSO_GITHUB_V3_API_URL="+w.sim.APIURL(),
		"KALYPSO_GITHUB_WEB_URL="+w.sim.URL(),
		fmt.Sprintf("KALYPSO_GITHUB_APP_INTEGRATION_ID=%d", w.sim.AppID()),
		"KALYPSO_GITHUB_APP_WEBHOOK_SECRET="+secret,
		"KALYPSO_GITHUB_APP_PRIVATE_KEY_FILE="+keyFile,
		"KALYPSO_CACHE_DIR="+w.cache,
		"KALYPSO_RESYNC_INTERVAL=0",
		"KALYPSO_LOG_FORMAT=json",
	)
	cmd.Env = append(cmd.Env, extraEnv...)
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(w.t, cmd.Start())
	w.app = &appProcess{cmd: cmd, logs: logs, done: make(chan error, 1)}
	go func(p *appProcess) { p.done <- p.cmd.Wait() }(w.app)
	w.t.Cleanup(func() { w.stop() })
	w.eventually(func() bool {
		return strings.Contains(logs.String(), `"resync done"`) || strings.Contains(logs.String(), `"resync failed"`)
	},
		"the app listens and finishes its first resync")
	require.NotContains(w.t, logs.String(), `"resync failed"`, logs.String())
}

// stop ends the app gracefully (SIGTERM) and waits for it.
func (w *world) stop() {
	if w.app == nil {
		return
	}
	_ = w.app.cmd.Process.Signal(os.Interrupt)
	select {
	case <-w.app.done:
	case <-time.After(30 * time.Second):
		_ = w.app.cmd.Process.Kill()
		<-w.app.done
	}
	w.app = nil
}

// settle waits until the app has processed every webhook the simulator delivered to it.
func (w *world) settle() {
	w.t.Helper()
	w.sim.WaitWebhooks()
	w.eventually(func() bool {
		want := 0
		for _, d := range w.sim.Deliveries() {
			if d.State == githubsim.DeliveryDelivered && d.StatusCode == http.StatusOK {
				want++
			}
		}
		logs := w.app.logs.String()
		got := strings.Count(logs, `"webhook processed"`) + strings.Count(logs, `"webhook processing failed"`)
		return got >= want
	}, "the app processes every delivered webhook")
}

func (w *world) eventually(cond func() bool, what string) {
	w.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			logs := ""
			if w.app != nil {
				logs = w.app.logs.String()
			}
			w.t.Fatalf("timed out waiting until %s\napp logs:\n%s", what, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// commit changes files of a branch (nil deletes) as a user would, and waits for the app.
func (w *world) commit(repo, branch string, files map[string]*string) string {
	w.t.Helper()
	sha, err := w.sim.CommitFiles(sample.Owner, repo, branch, files, "change")
	require.NoError(w.t, err)
	if w.app != nil {
		w.settle()
	}
	return sha
}

// appPRs returns the app's open pull requests on the GitOps repository.
func (w *world) appPRs() []*github.PullRequest {
	var out []*github.PullRequest
	for _, pr := range w.sim.PullRequests(sample.Owner, sample.GitOpsRepo) {
		if pr.GetState() == "open" && strings.HasPrefix(pr.GetHead().GetRef(), "kalypso/") {
			out = append(out, pr)
		}
	}
	return out
}

func (w *world) appPR(env string) *github.PullRequest {
	for _, pr := range w.appPRs() {
		if pr.GetHead().GetRef() == "kalypso/"+env {
			return pr
		}
	}
	return nil
}

// tree reads a branch of the GitOps repository.
func (w *world) tree(branch string) map[string]string {
	w.t.Helper()
	tree, err := w.sim.Tree(sample.Owner, sample.GitOpsRepo, branch)
	require.NoError(w.t, err)
	return tree
}

func str(s string) *string { return &s }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var _ = context.Background
