package e2e

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// rssMiB reads the resident memory of the app's process.
func (w *world) rssMiB() int {
	w.t.Helper()
	n, err := processRSS(w.app.cmd.Process.Pid)
	require.NoError(w.t, err)
	return int(n >> 20)
}

// Memory follows what the declared environments read, not the organisation: an unrelated
// repository (with .environments/ and a large branch) is never fetched, and a huge YAML file in
// a workload repository is an error at its path, never read into memory.
func TestE2EMemoryFollowsDeclaredEnvironments(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, w.sim.CreateRepo(w.seeded.Installation, sample.Owner, "unrelated", "main"))
	_, err := w.sim.CommitFiles(sample.Owner, "unrelated", "main", map[string]*string{
		".environments/dev.yaml": str(strings.ReplaceAll(sampleFile(t, "main", ".environments/dev.yaml"), "kalypso-control-plane", "unrelated")),
	}, "looks like a control plane")
	require.NoError(t, err)
	noise := make([]byte, 24<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte('a' + rng.IntN(26))
	}
	_, err = w.sim.CommitFiles(sample.Owner, "unrelated", "big", map[string]*string{"blob.yaml": str("# " + string(noise))}, "big")
	require.NoError(t, err)
	w.start("KALYPSO_CACHE_DIR="+w.cache, "KALYPSO_SOURCES_MAX_FILE_BYTES=1Mi")
	_, err = os.Stat(filepath.Join(w.cache, sample.Owner, "unrelated.git"))
	require.ErrorIs(t, err, os.ErrNotExist, "an undeclared repository is never fetched")

	huge := "# " + strings.Repeat("x", 100) + "\n"
	huge = strings.Repeat(huge, (48<<20)/len(huge))
	sha := w.commit(sample.WorkloadRepo, "main", map[string]*string{"workloads/huge.yaml": &huge})
	run := w.check(sample.WorkloadRepo, sha, "dev")
	require.NotNil(t, run)
	require.Equal(t, "failure", run.GetConclusion())
	anns, _, err := w.sim.CheckRunDetails(run.GetID())
	require.NoError(t, err)
	require.Len(t, anns, 1)
	require.Equal(t, "workloads/huge.yaml", anns[0].GetPath())
	require.Contains(t, anns[0].GetMessage(), "file is larger than the limit")
	require.Contains(t, anns[0].GetMessage(), "sources.maxFileBytes")
	rss := w.rssMiB()
	t.Logf("app RSS after a %d MiB file: %d MiB", len(huge)>>20, rss)
	require.Less(t, rss, 512, "memory stays bounded")

	// The environment still reconciles what it can, and the next change goes through.
	sha = w.commit(sample.WorkloadRepo, "main", map[string]*string{"workloads/huge.yaml": nil, "workloads/observability.yaml": str(observability("./prometheus-v2"))})
	require.Equal(t, "success", w.check(sample.WorkloadRepo, sha, "dev").GetConclusion())
	require.Contains(t, w.tree("kalypso/dev")["large/observability-prometheus/reconciler.yaml"], "./prometheus-v2")
	_, err = os.Stat(filepath.Join(w.cache, sample.Owner, "unrelated.git"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
