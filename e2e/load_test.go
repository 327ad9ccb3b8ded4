package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// copies sends n copies of a recorded delivery to the app, each with its own delivery ID and
// signed as GitHub signs, from `senders` connections at once; it returns the status codes.
func (w *world) copies(d githubsim.Delivery, n, senders int) []int {
	w.t.Helper()
	codes := make([]int, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				codes[i] = w.deliverCopy(d, fmt.Sprintf("%s-copy-%d", d.ID, i))
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return codes
}

// deliverCopy sends a delivery's body again under another delivery ID and returns the answer's status.
func (w *world) deliverCopy(d githubsim.Delivery, id string) int {
	req, err := http.NewRequest(http.MethodPost, "http://"+w.addr+"/api/github/hook", bytes.NewReader(d.Body))
	if err != nil {
		return 0
	}
	req.Header = d.Header.Clone()
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", githubsim.Sign(secret, d.Body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitCopies waits until the app has processed n copies of delivery d (and the first one).
func (w *world) waitCopies(d githubsim.Delivery, n int) {
	w.t.Helper()
	w.eventually(func() bool {
		done := w.processed()
		count := done["first"]
		for i := range n {
			count += done[fmt.Sprintf("%s-copy-%d", d.ID, i)]
		}
		return count >= n+1
	}, fmt.Sprintf("the app processes the %d copies", n+1))
}

// metric reads one sample of the app's /metrics ("" labels: the unlabelled series); -1 when absent.
func (w *world) metric(name, labels string) float64 {
	resp, err := http.Get("http://" + w.mgmt + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	want := name
	if labels != "" {
		want += "{" + labels + "}"
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), want+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// reconciles counts the reconciles of an environment the app logged.
func (w *world) reconciles(env string) int {
	key := fmt.Sprintf(`"work":"environment/%d/%s/%s/%s"`, w.seeded.Installation, sample.Owner, sample.ControlPlane, env)
	n := 0
	for _, line := range strings.Split(w.logs.String(), "\n") {
		if strings.Contains(line, key) && strings.Contains(line, `"environment reconciled"`) {
			n++
		}
	}
	return n
}

// 500 copies of one push arrive while the environments it names are being reconciled: none is
// refused, and they cost one more reconcile per environment, whose REST calls are fewer than
// those of the first.
func TestE2EABurstOfCopiesOfOnePushCostsOneReconcilePerEnvironment(t *testing.T) {
	w := newWorld(t)
	w.start()
	w.sim.ResetCalls()
	w.commit(sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(observability("./single"))})
	single := w.sim.TotalCalls()

	w.sim.DropWebhooks(true)
	sha, err := w.sim.CommitFiles(sample.Owner, sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(observability("./burst"))}, "burst")
	require.NoError(t, err)
	w.sim.DropWebhooks(false)
	push := w.pushDelivery(sha)
	devBefore, stageBefore := w.reconciles("dev"), w.reconciles("stage")
	gate := make(chan struct{})
	w.sim.InjectFault(githubsim.Fault{Git: true, PathPattern: "/" + sample.Owner + "/" + sample.GitOpsRepo + ".git/", Gate: gate})
	w.sim.ResetCalls()
	require.Equal(t, http.StatusOK, w.deliverCopy(push, "first"))
	w.eventually(func() bool { return w.sim.HeldCalls() == 1 }, "the first copy's reconciles are under way")

	codes := w.copies(push, 499, 4)
	for i, code := range codes {
		require.Equal(t, http.StatusOK, code, "copy %d is accepted", i+2)
	}
	w.eventually(func() bool { return w.metric("kalypso_queue_keys", `queue="work"`) == 2 },
		"the copies wait as one more reconcile of each environment")
	close(gate)
	w.waitCopies(push, 499)

	require.Equal(t, 2, w.reconciles("dev")-devBefore, "dev: the reconcile under way and one more")
	require.Equal(t, 2, w.reconciles("stage")-stageBefore, "stage: the reconcile under way and one more")
	burst := w.sim.TotalCalls()
	t.Logf("REST calls: %d for one push, %d for 500 copies of one", single, burst)
	require.LessOrEqual(t, burst, 2*single, "the burst costs less than two pushes")
	require.Contains(t, w.tree("kalypso/dev")["large/observability-prometheus/reconciler.yaml"], "./burst")
	require.Len(t, w.checks(sample.WorkloadRepo, sha, "dev"), 1)
	require.Equal(t, -1.0, w.metric("kalypso_webhooks_rejected_total", `reason="queue_full"`), "nothing refused, ever")
}

// BenchmarkE2ELoad drives the app at one replica with 10 signed pushes per second for 60 s
// (control plane and workload alternately), then with a burst of 500 copies of one push, and
// reports what was refused, how long after the last push its pull request showed the newest
// revision, reconciles and REST calls. Run with: go test -run '^$' -bench E2ELoad -benchtime 1x ./e2e
func BenchmarkE2ELoad(b *testing.B) {
	for range b.N {
		w := newWorld(b)
		w.start()
		steady(b, w, 10, 60*time.Second)
		burstOf(b, w, 500)
	}
}

// steady pushes rate times per second for d and reports the figures.
func steady(b *testing.B, w *world, rate int, d time.Duration) {
	w.sim.ResetCalls()
	dev0, stage0 := w.reconciles("dev"), w.reconciles("stage")
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	n := rate * int(d/time.Second)
	refused := 0
	var last string
	var lastAt time.Time
	for i := range n {
		<-tick.C
		repo, files := sample.ControlPlane, map[string]*string{"configs/dev-config.yaml": str(devConfig(fmt.Sprintf("Load-%04d", i)))}
		if i%2 == 1 {
			repo, files = sample.WorkloadRepo, map[string]*string{"workloads/observability.yaml": str(observability(fmt.Sprintf("./load-%04d", i)))}
		}
		sha, err := w.sim.CommitFiles(sample.Owner, repo, branchOf(repo), files, fmt.Sprintf("load %d", i))
		require.NoError(b, err)
		last, lastAt = fmt.Sprintf("Load-%04d", i), time.Now()
		if i%2 == 1 {
			last = fmt.Sprintf("./load-%04d", i)
		}
		if d := w.pushDelivery(sha); d.StatusCode != http.StatusOK {
			refused++
		}
	}
	w.eventually(func() bool {
		got := w.tree("kalypso/dev")
		return strings.Contains(got["large/observability-prometheus/reconciler.yaml"], last) ||
			strings.Contains(got["large/observability-prometheus/platform-config.yaml"], last)
	}, "the pull request shows the last push")
	lag := time.Since(lastAt)
	w.settle()
	b.ReportMetric(float64(refused), "refused")
	b.ReportMetric(lag.Seconds(), "s-to-newest")
	b.ReportMetric(float64(w.reconciles("dev")-dev0)/float64(n), "dev-reconciles/push")
	b.ReportMetric(float64(w.reconciles("stage")-stage0)/float64(n), "stage-reconciles/push")
	b.ReportMetric(float64(w.sim.TotalCalls())/float64(n), "REST-calls/push")
}

// burstOf sends n copies of one push at once and reports the figures.
func burstOf(b *testing.B, w *world, n int) {
	w.sim.DropWebhooks(true)
	sha, err := w.sim.CommitFiles(sample.Owner, sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(observability("./burst"))}, "burst")
	require.NoError(b, err)
	w.sim.DropWebhooks(false)
	w.sim.ResetCalls()
	dev0 := w.reconciles("dev")
	start := time.Now()
	push := w.pushDelivery(sha)
	codes := append(w.copies(push, n-1, 8), w.deliverCopy(push, "first"))
	refused := 0
	for _, c := range codes {
		if c != http.StatusOK {
			refused++
		}
	}
	w.eventually(func() bool {
		return strings.Contains(w.tree("kalypso/dev")["large/observability-prometheus/reconciler.yaml"], "./burst")
	}, "the pull request shows the burst's push")
	converged := time.Since(start)
	w.waitCopies(push, n-1)
	b.ReportMetric(float64(refused), "burst-refused")
	b.ReportMetric(converged.Seconds(), "burst-s-to-newest")
	b.ReportMetric(float64(w.reconciles("dev")-dev0), "burst-dev-reconciles")
	b.ReportMetric(float64(w.sim.TotalCalls()), "burst-REST-calls")
}
