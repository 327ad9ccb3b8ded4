package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// Bounds documented in docs/security.md ("Memory" and "Parse bombs"), asserted here against the
// real binary.
const (
	// maxPeakRSSMiB bounds the app's peak resident memory while it refuses a commit naming one
	// 4 MiB blob at 100 paths, in a workload branch and in a fork's pull request.
	maxPeakRSSMiB = 128
	// maxBombCPUSeconds bounds the CPU time the app spends on a push of a file of thousands of
	// broken documents, reporting it included.
	maxBombCPUSeconds = 5
	// maxBombRESTCalls bounds the REST calls a push of that file costs, whatever its errors.
	maxBombRESTCalls = 10
	// latencyFactor bounds how much slower an unrelated reconcile gets while the file stays.
	latencyFactor = 10
)

// procStatus reads a field of /proc/<pid>/status in kB, as bytes.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		if kb, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
			require.NoError(t, err)
			return n << 10
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}

// peakRSSMiB is the app's peak resident memory so far (VmHWM).
func (w *world) peakRSSMiB(t *testing.T) int64 { return procStatus(t, w.pid(), "VmHWM") >> 20 }

// cpuSeconds is the CPU time the app has used, user and system (utime + stime of /proc/<pid>/stat).
func (w *world) cpuSeconds(t *testing.T) float64 {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", w.pid()))
	require.NoError(t, err)
	// Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	utime, err := strconv.ParseFloat(fields[11], 64)
	require.NoError(t, err)
	stime, err := strconv.ParseFloat(fields[12], 64)
	require.NoError(t, err)
	return (utime + stime) / 100 // clock ticks; USER_HZ is 100 on Linux
}

// runText is everything a check run says: title, summary, text and annotations.
func (w *world) runText(t *testing.T, run *github.CheckRun) string {
	t.Helper()
	anns, _, err := w.sim.CheckRunDetails(run.GetID())
	require.NoError(t, err)
	text := run.GetOutput().GetTitle() + "\n" + run.GetOutput().GetSummary() + "\n" + run.GetOutput().GetText()
	for _, a := range anns {
		text += "\n" + a.GetPath() + ":" + strconv.Itoa(a.GetStartLine()) + ": " + a.GetMessage()
	}
	return text
}

// sameBlobAt names one blob of a little under 4 MiB (the default sources.maxFileBytes) at n
// paths below dir: a pack of a few KB that would be n × 4 MiB read.
func sameBlobAt(dir string, n int) map[string]*string {
	blob := "# " + strings.Repeat("x", 4<<20-16) + "\n"
	files := map[string]*string{}
	for i := range n {
		files[fmt.Sprintf("%s/copy-%03d.yaml", dir, i)] = &blob
	}
	return files
}

// An attacker who can push to a workload repository, or open a pull request on one from a
// fork, commits one 4 MiB blob at 100 paths. The app decides from the tree's sizes that the
// source is over sources.maxSourceBytes before reading any of it: one error on that source,
// the other sources read as usual, and the app's peak memory stays under the documented bound.
func TestE2EOneSmallPushCannotTakeGigabytes(t *testing.T) {
	w := newWorld(t)
	w.start()

	sha := w.commit(sample.WorkloadRepo, "main", sameBlobAt("workloads", 100))
	run := w.check(sample.WorkloadRepo, sha, "dev")
	require.NotNil(t, run)
	require.Equal(t, "failure", run.GetConclusion())
	text := w.runText(t, run)
	require.Contains(t, text, "over the limit of 16777216 bytes (setting sources.maxSourceBytes): none of them is read")
	require.Equal(t, 1, strings.Count(text, "sources.maxSourceBytes"), "one error on the source:\n%s", text)
	peak := w.peakRSSMiB(t)
	t.Logf("peak RSS after 100 × 4 MiB in a workload branch: %d MiB", peak)
	require.Less(t, peak, int64(maxPeakRSSMiB))

	number, head, err := w.sim.OpenForkPR(sample.Owner, sample.WorkloadRepo, "mallory", "main", sameBlobAt("workloads/more", 100), "More copies", "mallory")
	require.NoError(t, err)
	w.settle()
	previews := w.previews(sample.WorkloadRepo, head, "dev")
	require.NotEmpty(t, previews, "pull request #%d is previewed", number)
	require.Contains(t, w.runText(t, previews[0]), "(setting sources.maxSourceBytes)")
	peak = w.peakRSSMiB(t)
	t.Logf("peak RSS after the same in a fork's pull request: %d MiB", peak)
	require.Less(t, peak, int64(maxPeakRSSMiB))

	// The environment's own branch is bounded the same way.
	sha = w.commit(sample.ControlPlane, "dev", sameBlobAt("bulk", 100))
	require.Contains(t, w.runText(t, w.check(sample.ControlPlane, sha, "dev")), "(setting sources.maxSourceBytes)")
	require.Less(t, w.peakRSSMiB(t), int64(maxPeakRSSMiB))
}

// brokenDocuments is a YAML file of n documents, each with a syntax error.
func brokenDocuments(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\ndata: {A: [unclosed\n", i)
	}
	return b.String()
}

// A file of thousands of broken documents pushed to an environment branch costs the app CPU
// time linear in its size, a constant number of REST calls (at most 20 errors per file, at
// most 50 annotations per check run), and does not slow an unrelated later reconcile beyond a
// small factor of one measured before it, in the same test.
func TestE2EParseBombIsCheap(t *testing.T) {
	w := newWorld(t)
	w.start()
	west, err := w.sim.ReadFile(sample.Owner, sample.ControlPlane, "dev", westUSConfig)
	require.NoError(t, err)
	reconcile := func(n int) time.Duration {
		start := time.Now()
		tuned := strings.Replace(west, "mysql2", fmt.Sprintf("mysql%d", n), 1)
		sha := w.commit(sample.ControlPlane, "dev", map[string]*string{westUSConfig: &tuned})
		require.NotNil(t, w.check(sample.ControlPlane, sha, "dev"))
		return time.Since(start)
	}
	reconcile(3) // warm: the first push after the start fetches more
	baseline := min(reconcile(4), reconcile(5))

	bomb := brokenDocuments(2000) // 150 KB; re-parsing the file for every broken document took 33 s for 48 KB
	cpu := w.cpuSeconds(t)
	w.sim.ResetCalls()
	sha := w.commit(sample.ControlPlane, "dev", map[string]*string{"bomb.yaml": &bomb})
	calls := w.sim.TotalCalls()
	spent := w.cpuSeconds(t) - cpu
	run := w.check(sample.ControlPlane, sha, "dev")
	require.NotNil(t, run)
	require.Equal(t, "failure", run.GetConclusion())
	text := w.runText(t, run)
	require.Contains(t, text, "and 1980 more errors in this file (at most 20 are reported per file)")
	t.Logf("a push of %d KB of broken documents: %.2f CPU seconds, %d REST calls", len(bomb)>>10, spent, calls)
	require.Less(t, spent, float64(maxBombCPUSeconds))
	require.LessOrEqual(t, calls, maxBombRESTCalls, "%v", w.sim.Calls())

	after := reconcile(6)
	t.Logf("an unrelated reconcile: %s before the file, %s with it", baseline, after)

	require.Less(t, after, latencyFactor*baseline, "an unrelated reconcile is not slowed")
}
