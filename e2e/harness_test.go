// Package e2e drives the real kalypso binary through a simulated GitHub, scenario by scenario.
package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/freeport"
	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/pgtest"
	"github.com/kalypso-gitops/kalypso/internal/sample"
	"github.com/kalypso-gitops/kalypso/internal/syncbuf"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kalypso-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "kalypso")
	if other := os.Getenv("KALYPSO_E2E_BINARY"); other != "" { // another build, e.g. to show a failure an older one had
		binary = other
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	args := []string{"build", "-o", binary}
	if raceBinary() {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "../cmd/kalypso")...)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build kalypso:", err)
		os.Exit(1)
	}
	code := m.Run()
	pgtest.StopShared()
	os.RemoveAll(dir)
	os.Exit(code)
}

const secret = "e2e-webhook-secret"

// raceBinary reports whether the app under test is built with the race detector
// (KALYPSO_E2E_RACE=1, as `make race` does): a data race then ends in its logs.
func raceBinary() bool { return os.Getenv("KALYPSO_E2E_RACE") != "" }

// world is a simulated GitHub seeded with the sample, and the app running against it.
type world struct {
	t      testing.TB
	sim    *githubsim.Server
	seeded *sample.Seeded
	addr   string // public listener: the webhook endpoint
	mgmt   string // management listener: /metrics and the probes
	cache  string
	app    *appProcess
	// logs collects the output of every run of the app, so that settle counts across restarts.
	logs *syncbuf.Buffer
	// redelivered counts, per delivery, the extra times it was sent and accepted.
	redelivered map[string]int
	// lost holds deliveries accepted by an app that was killed before processing them.
	lost map[string]bool
	// cluster, when set, runs the app as several replicas instead of app.
	cluster *cluster
	// patience is how long eventually waits; 60 s when zero.
	patience time.Duration
}

// newWorld seeds the simulator; the app is not started yet.
func newWorld(t testing.TB) *world {
	t.Helper()
	sim, err := githubsim.New(githubsim.Options{Dir: filepath.Join(t.TempDir(), "github")})
	require.NoError(t, err)
	require.NoError(t, sim.Start())
	t.Cleanup(func() { sim.Close() })
	seeded, err := sample.Seed(sim, sample.Owner)
	require.NoError(t, err)
	w := &world{t: t, sim: sim, seeded: seeded, addr: freeAddr(t), mgmt: freeAddr(t), cache: filepath.Join(t.TempDir(), "cache"), logs: &syncbuf.Buffer{}, redelivered: map[string]int{}, lost: map[string]bool{}}
	sim.SetWebhook("http://"+w.addr+"/api/github/hook", secret)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("app logs:\n%s", w.logs.String())
		}
	})
	return w
}

// freeAddr returns a free address of 127.0.0.1 for an app process to listen on.
func freeAddr(t testing.TB) string {
	addr, err := freeport.Addr()
	require.NoError(t, err)
	return addr
}

// appProcess is a running `kalypso serve`.
type appProcess struct {
	cmd  *exec.Cmd
	done chan error
}

// start runs `kalypso serve` with settings from the environment and waits until it listens
// and its first resync is done.
func (w *world) start(extraEnv ...string) {
	w.t.Helper()
	resyncs := func() (done, failed int) {
		logs := w.logs.String()
		return strings.Count(logs, `"resync done"`), strings.Count(logs, `"resync failed"`)
	}
	done0, failed0 := resyncs()
	w.launch(extraEnv...)
	w.eventually(func() bool {
		done, failed := resyncs()
		return done > done0 || failed > failed0
	}, "the app listens and finishes its first resync")
	_, failed := resyncs()
	require.Equal(w.t, failed0, failed, "the first resync fails:\n%s", w.logs.String())
}

// launch runs `kalypso serve` with settings from the environment (extraEnv last, so it
// overrides) and returns at once.
func (w *world) launch(extraEnv ...string) {
	w.t.Helper()
	w.app = w.serve(w.serveEnv(w.addr, w.mgmt, w.sim.APIURL(), w.sim.URL()), w.logs, extraEnv...)
	w.t.Cleanup(func() { w.stop() })
}

// serveEnv is the environment of a `kalypso serve` listening on addr and mgmt and reaching
// GitHub at apiURL and webURL.
func (w *world) serveEnv(addr, mgmt, apiURL, webURL string) []string {
	w.t.Helper()
	keyFile := filepath.Join(w.t.TempDir(), "key.pem")
	require.NoError(w.t, os.WriteFile(keyFile, w.sim.PrivateKeyPEM(), 0o600))
	return append(os.Environ(),
		"KALYPSO_SERVER_ADDRESS="+addr,
		"KALYPSO_SERVER_MANAGEMENT_ADDRESS="+mgmt,
		"KALYPSO_GITHUB_V3_API_URL="+apiURL,
		"KALYPSO_GITHUB_WEB_URL="+webURL,
		fmt.Sprintf("KALYPSO_GITHUB_APP_INTEGRATION_ID=%d", w.sim.AppID()),
		"KALYPSO_GITHUB_APP_WEBHOOK_SECRET="+secret,
		"KALYPSO_GITHUB_APP_PRIVATE_KEY_FILE="+keyFile,
		"KALYPSO_RESYNC_INTERVAL=0",
		"KALYPSO_LOG_FORMAT=json",
		"KALYPSO_CONTROL_PLANES="+sample.Owner+"/"+sample.ControlPlane,
		"KALYPSO_SOURCES_MANIFEST_HOSTS=github.com",
	)
}

// serve starts `kalypso serve` with env (extraEnv last, so it overrides), its output to out.
func (w *world) serve(env []string, out io.Writer, extraEnv ...string) *appProcess {
	w.t.Helper()
	cmd := exec.Command(binary, "serve")
	cmd.Env = append(env, extraEnv...)
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(w.t, cmd.Start())
	p := &appProcess{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- p.cmd.Wait() }()
	return p
}

// pid returns the process ID of the running app.
func (w *world) pid() int {
	w.t.Helper()
	require.NotNil(w.t, w.app, "the app is not running")
	return w.app.cmd.Process.Pid
}

// processRSS returns the resident memory of a process (VmRSS of /proc/<pid>/status), in bytes.
func processRSS(pid int) (int64, error) { return procStatusBytes(pid, "VmRSS") }

// peakRSS returns the peak resident memory of a process (VmHWM of /proc/<pid>/status), in bytes.
func peakRSS(pid int) (int64, error) { return procStatusBytes(pid, "VmHWM") }

// procStatusBytes reads a size in kB of /proc/<pid>/status, such as VmRSS, in bytes.
func procStatusBytes(pid int, field string) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if kb, ok := strings.CutPrefix(line, field+":"); ok {
			var n int64
			if _, err := fmt.Sscanf(strings.TrimSpace(kb), "%d kB", &n); err != nil {
				return 0, fmt.Errorf("/proc/%d/status: %q: %w", pid, line, err)
			}
			return n << 10, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// kill ends the app abruptly (SIGKILL), whatever it is doing.
func (w *world) kill() {
	if w.app == nil {
		return
	}
	_ = w.app.cmd.Process.Kill()
	<-w.app.done
	w.app = nil
	w.markLost(func(string) bool { return true })
}

// markLost records as lost the deliveries an app accepted and had not processed when it was
// killed; answered tells which deliveries that app answered.
func (w *world) markLost(answered func(id string) bool) {
	done := w.processed()
	for _, d := range w.sim.Deliveries() {
		if answered(d.ID) && w.accepted(d) && done[d.ID] < 1+w.redelivered[d.ID] {
			w.lost[d.ID] = true
		}
	}
}

// stop ends the app gracefully (SIGTERM) and waits for it.
func (w *world) stop() {
	if w.app == nil {
		return
	}
	w.app.stop()
	w.app = nil
}

// stop ends the process gracefully (SIGTERM), killing it after 30 s, and waits for it.
func (p *appProcess) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// settle waits until the app has processed every webhook the simulator delivered to it and
// it accepted, each as many times as it was accepted. Deliveries are matched by ID: a count
// alone could be fooled by an event processed before the simulator recorded its delivery.
func (w *world) settle() {
	w.t.Helper()
	w.sim.WaitWebhooks()
	w.eventually(func() bool {
		done := w.processed()
		for _, d := range w.sim.DeliveryStates() {
			if w.accepted(d) && !w.lost[d.ID] && done[d.ID] < 1+w.redelivered[d.ID] {
				return false
			}
		}
		return true
	}, "the app processes every delivered webhook")
}

// accepted reports whether the app answered a delivery 200: it queued the event.
func (w *world) accepted(d githubsim.Delivery) bool {
	return d.State == githubsim.DeliveryDelivered && d.StatusCode == http.StatusOK
}

// skippedDelivery is what the app logs for a redelivery it does not process again.
const skippedDelivery = "webhook skipped: delivery already processed"

// processed counts, per delivery ID, the webhook events the app has finished or skipped as
// already processed, in every run.
func (w *world) processed() map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(w.logs.String(), "\n") {
		if !strings.Contains(line, `"webhook processed"`) && !strings.Contains(line, `"webhook processing failed"`) &&
			!strings.Contains(line, `"`+skippedDelivery+`"`) {
			continue
		}
		var entry struct {
			Delivery string `json:"github_delivery_id"`
			Message  string `json:"message"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && (strings.HasPrefix(entry.Message, "webhook process") || entry.Message == skippedDelivery) {
			out[entry.Delivery]++
		}
	}
	return out
}

func (w *world) eventually(cond func() bool, what string) {
	w.t.Helper()
	patience := w.patience
	if patience == 0 {
		patience = 60 * time.Second
	}
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			w.t.Fatalf("timed out waiting until %s\napp logs:\n%s", what, w.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// commit changes files of a branch (nil deletes) as a user would, and waits for the app.
func (w *world) commit(repo, branch string, files map[string]*string) string {
	w.t.Helper()
	sha, err := w.sim.CommitFiles(sample.Owner, repo, branch, files, "change")
	require.NoError(w.t, err)
	if w.app != nil || w.cluster != nil {
		w.settle()
	}
	return sha
}

// appPRs returns the app's open pull requests on the GitOps repository.
func (w *world) appPRs() []*github.PullRequest { return sample.AppPullRequests(w.sim) }

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

// head returns the commit a branch of the GitOps repository points at, or "" when it does not exist.
func (w *world) head(branch string) string {
	w.t.Helper()
	branches, err := w.sim.Branches(sample.Owner, sample.GitOpsRepo)
	require.NoError(w.t, err)
	return branches[branch]
}

// check returns the newest check run of an environment on a commit, or nil.
func (w *world) check(repo, sha, env string) *github.CheckRun {
	w.t.Helper()
	runs := w.checks(repo, sha, env)
	if len(runs) == 0 {
		return nil
	}
	return runs[0]
}

// checks returns every check run of an environment on a commit, newest first.
func (w *world) checks(repo, sha, env string) []*github.CheckRun {
	var out []*github.CheckRun
	for _, run := range w.sim.CheckRuns(sample.Owner, repo, sha) {
		if run.GetName() == "Kalypso / "+env {
			out = append(out, run)
		}
	}
	return out
}

// prsOf returns the open pull requests of the GitOps repository whose head is branch.
func (w *world) prsOf(branch string) []*github.PullRequest {
	var out []*github.PullRequest
	for _, pr := range w.sim.PullRequests(sample.Owner, sample.GitOpsRepo) {
		if pr.GetState() == "open" && pr.GetHead().GetRef() == branch {
			out = append(out, pr)
		}
	}
	return out
}

// redeliver sends a recorded delivery again and waits until the app has processed it.
func (w *world) redeliver(id string) githubsim.Delivery {
	w.t.Helper()
	before := false
	for _, d := range w.sim.Deliveries() {
		if d.ID == id {
			before = w.accepted(d) && !w.lost[id]
		}
	}
	d, err := w.sim.Redeliver(id)
	require.NoError(w.t, err)
	if !before && w.accepted(d) {
		delete(w.lost, id)
	} else if before && w.accepted(d) {
		w.redelivered[id]++ // accepted twice: processed twice
	}
	w.settle()
	return d
}

// delivery returns the newest push delivery for a commit.
func (w *world) pushDelivery(sha string) githubsim.Delivery {
	w.t.Helper()
	ds := w.sim.Deliveries()
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i].Event == "push" && bytes.Contains(ds[i].Body, []byte(`"after":"`+sha+`"`)) {
			return ds[i]
		}
	}
	w.t.Fatalf("no push delivery for commit %s", sha)
	return githubsim.Delivery{}
}

// expected computes an environment's GitOps tree independently of the app: it runs
// `kalypso render` in directory mode on the current control-plane, main and workload trees,
// with the environment's GitOps branch as the folder to converge.
func (w *world) expected(env string) map[string]string {
	w.t.Helper()
	dir := w.t.TempDir()
	tree := func(repo, ref string) map[string]string {
		t, err := w.sim.Tree(sample.Owner, repo, ref)
		require.NoError(w.t, err)
		return t
	}
	writeDir(w.t, filepath.Join(dir, "main"), tree(sample.ControlPlane, w.seeded.MainSHA))
	writeDir(w.t, filepath.Join(dir, env), tree(sample.ControlPlane, env))
	writeDir(w.t, filepath.Join(dir, "workloads", sample.Owner, sample.WorkloadRepo, "main"), tree(sample.WorkloadRepo, "main"))
	out := filepath.Join(dir, "out")
	writeDir(w.t, out, tree(sample.GitOpsRepo, env))
	cmd := exec.Command(binary, "render", "--main-dir", filepath.Join(dir, "main"), "--env-dir", filepath.Join(dir, env),
		"--workloads-dir", filepath.Join(dir, "workloads"), "--environment", env, "--out", out)
	output, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState.ExitCode() != 1 { // 1: errors in the inputs, reported and isolated
		w.t.Fatalf("kalypso render: %v\n%s", err, output)
	}
	return readDir(w.t, out)
}

func writeDir(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
}

func readDir(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	}))
	return out
}

// requireTree compares two trees file by file, so that a difference names its path.
func requireTree(t *testing.T, want, got map[string]string, msg string) {
	t.Helper()
	require.Equal(t, slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got)), "%s: file set", msg)
	for p := range want {
		require.Equal(t, want[p], got[p], "%s: content of %s", msg, p)
	}
}

// Control-plane files as a user would write them.

func devConfig(environment string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: dev-config
  labels:
     platform-config: "true"
data:
  ENVIRONMENT: %s
  SOME_COMMON_ENVIRONMENT_VARIABLE: "false"
`, environment)
}

func clusterType(name, size string) string {
	return fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata:
  name: %s
  labels:
    region: west-us
    size: %s
spec:
  reconciler: arc-flux
  namespaceService: default
  configType: configmap
`, name, size)
}

// observability is the sample's workload with the prometheus target reading path.
func observability(path string) string {
	return fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: observability
  labels:
    type: service
    stack: observability
spec:
  deploymentTargets:
    - name: prometheus
      environment: dev
      manifests:
        repo: https://github.com/microsoft/kalypso-svc-gitops
        branch: dev
        path: %s
`, path)
}
