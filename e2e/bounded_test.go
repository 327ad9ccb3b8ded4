package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// bombTemplate is a reconciler Template whose manifest runs body.
func bombTemplate(name, body string) string {
	return fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata:
  name: %s
spec:
  type: reconciler
  manifests:
    - |
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: {{ .DeploymentTargetName }}
      data:
        x: '%s'
`, name, body)
}

// Templates pushed to an environment branch whose execution is a bomb — a nested `until`
// that would run for minutes, a `repeat` that would take gigabytes — fail their assignments
// with an error naming the limit; the app stays alive and small, the environment's lock is
// released (the next push to it reconciles), and other environments are reconciled meanwhile.
func TestE2ETemplateBombsAreBounded(t *testing.T) {
	w := newWorld(t)
	w.start("KALYPSO_RENDER_TIMEOUT=3s")
	rss := watchRSS(t, w.app.cmd.Process.Pid)

	// The nested until stops on the bytes its lists take, or on the deadline when the machine
	// is slow; the loop that calls no function and prints nothing stops on the deadline.
	bombs := []struct {
		name, body string
		settings   []string
	}{
		{"repeat-bomb", `{{ repeat 1500000000 "x" | len }}`, []string{"render.maxFunctionBytes"}},
		{"repeat-oom", `{{ repeat 3000000000 "x" | len }}`, []string{"render.maxFunctionBytes"}},
		{"until-bomb", `{{ range until 30000 }}{{ range until 30000 }}{{ end }}{{ end }}`, []string{"render.maxListLength"}},
		{"nested-until", `{{ range until 10000 }}{{ range until 10000 }}{{ end }}{{ end }}`, []string{"render.maxFunctionBytes", "render.timeout"}},
		{"loop-bomb", `{{ $l := until 10000 }}{{ range $l }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}{{ end }}`, []string{"render.timeout"}},
	}
	for _, bomb := range bombs {
		t.Run(bomb.name, func(t *testing.T) {
			stageHead := w.head("kalypso/stage")
			sha, err := w.sim.CommitFiles(sample.Owner, sample.ControlPlane, "dev", map[string]*string{
				"templates/bomb.yaml": str(bombTemplate(bomb.name, bomb.body)),
				largeClusterType:      str(strings.Replace(clusterType("large", "large"), "arc-flux", bomb.name, 1)),
			}, "bomb")
			require.NoError(t, err)
			// While dev renders the bomb, a change to stage is reconciled.
			extra := "extra-" + bomb.name
			stageSHA := w.commit(sample.ControlPlane, "stage", map[string]*string{"cluster-types/" + extra + ".yaml": str(clusterType(extra, "large"))})

			run := w.check(sample.ControlPlane, sha, "dev")
			require.NotNil(t, run, "a check run on the bomb's commit")
			require.Equal(t, "failure", run.GetConclusion())
			anns, _, err := w.sim.CheckRunDetails(run.GetID())
			require.NoError(t, err)
			require.NotEmpty(t, anns)
			var msgs []string
			for _, a := range anns {
				msgs = append(msgs, a.GetPath()+":"+strconv.Itoa(a.GetStartLine())+": "+a.GetMessage())
			}
			named := false
			for _, setting := range bomb.settings {
				named = named || strings.Contains(strings.Join(msgs, "\n"), setting)
			}
			require.True(t, named, "an annotation names the limit %v:\n%s", bomb.settings, strings.Join(msgs, "\n"))
			require.NoError(t, w.app.cmd.Process.Signal(syscall.Signal(0)), "the app is alive")

			require.Equal(t, "success", w.check(sample.ControlPlane, stageSHA, "stage").GetConclusion())
			require.NotEqual(t, stageHead, w.head("kalypso/stage"), "stage is reconciled")
			require.Contains(t, w.tree("kalypso/stage"), extra+"/README.md")

			// The lock is free: the platform team's fix reconciles dev.
			start := time.Now()
			fix := w.commit(sample.ControlPlane, "dev", map[string]*string{
				"templates/bomb.yaml": nil,
				largeClusterType:      str(clusterType("large", "large")),
			})
			require.Equal(t, "success", w.check(sample.ControlPlane, fix, "dev").GetConclusion())
			require.Less(t, time.Since(start), 60*time.Second)
			requireTree(t, w.expected("dev"), w.tree("kalypso/dev"), "kalypso/dev after the fix")
		})
	}
	if peak := rss.stop(); peak > 0 {
		require.Less(t, peak, int64(512<<20), "peak RSS of the app")
	}
}

// rssWatch samples a process's resident set size until stopped.
type rssWatch struct {
	mu   sync.Mutex
	max  int64
	done chan struct{}
	wg   sync.WaitGroup
}

// watchRSS samples /proc/<pid>/status every 20 ms; on systems without it the peak stays 0.
func watchRSS(t *testing.T, pid int) *rssWatch {
	r := &rssWatch{done: make(chan struct{})}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if n := readRSS(pid); n > 0 {
				r.mu.Lock()
				r.max = max(r.max, n)
				r.mu.Unlock()
			}
			select {
			case <-r.done:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { r.stop() })
	return r
}

// stop ends the sampling and returns the peak in bytes.
func (r *rssWatch) stop() int64 {
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.max
}

// readRSS returns VmRSS of a process in bytes, 0 when it cannot be read.
func readRSS(pid int) int64 {
	n, err := processRSS(pid)
	if err != nil {
		return 0
	}
	return n
}
