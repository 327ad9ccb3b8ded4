package reconcile

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/ghfake"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitfake"
	"github.com/kalypso-gitops/kalypso/internal/sample"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// workloadAt is the sample's workload with its deployment target reading path.
func workloadAt(t *testing.T, path string) *string {
	t.Helper()
	data, err := fs.ReadFile(sample.FS("workload-sources/microsoft/kalypso-svc-src/main"), "workloads/observability.yaml")
	require.NoError(t, err)
	require.Contains(t, string(data), "path: ./prometheus\n")
	return gitfake.Str(strings.Replace(string(data), "path: ./prometheus\n", "path: "+path+"\n", 1))
}

// beforeGitOps runs fn once, just before the first use of the GitOps repository: after the
// reconcile read its inputs, before it fetches the GitOps branches to write them.
type beforeGitOps struct {
	*gitcache.Cache
	fn func()
}

func (g *beforeGitOps) Use(ctx context.Context, r gitcache.Remote, branches []string, fn func(*gitcache.Session) error) error {
	if r.Owner == sampleGitOps.Owner && r.Name == sampleGitOps.Name && g.fn != nil {
		f := g.fn
		g.fn = nil
		f()
	}
	return g.Cache.Use(ctx, r, branches, fn)
}

// Two replicas reconcile the same environment: the slow one read the workload before a push
// that the fast one read and proposed. The slow one then finds kalypso/dev built from a
// descendant of what it read, reads its inputs again, and the proposal stays the newer one.
func TestEnvironmentNeverReplacesAHeadBuiltFromNewerSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := seedSample(t)
	older := s.remotes.Commit(sampleWorkload, "main", map[string]*string{"workloads/observability.yaml": workloadAt(t, "./prometheus-1")}, "p-1")
	g := ghfake.New()
	fast := New(gitcache.New("", s.remotes.URL()), ghfake.Installations{GitHub: g})
	var newer, fastCommit string
	slowGit := &beforeGitOps{Cache: s.cache, fn: func() {
		newer = s.remotes.Commit(sampleWorkload, "main", map[string]*string{"workloads/observability.yaml": workloadAt(t, "./prometheus-2")}, "p-2")
		out, err := fast.Environment(ctx, sampleDev)
		require.NoError(t, err)
		fastCommit = out.Commit
	}}
	slow := New(slowGit, ghfake.Installations{GitHub: g})
	out, err := slow.Environment(ctx, sampleDev)
	require.NoError(t, err)

	head := s.remotes.Head(sampleGitOps, "kalypso/dev")
	require.Equal(t, fastCommit, head, "the head built from the newer workload commit stays")
	require.Equal(t, fastCommit, out.Commit, "the slow replica read again and found nothing to change")
	require.Contains(t, s.remotes.Message(sampleGitOps, head), "Kalypso-Source: workload platform-svc "+newer)
	require.NotContains(t, s.remotes.File(sampleGitOps, "kalypso/dev", "large/observability-prometheus/reconciler.yaml"), "prometheus-1")
	require.Contains(t, s.remotes.File(sampleGitOps, "kalypso/dev", "large/observability-prometheus/reconciler.yaml"), "prometheus-2")
	require.NotEqual(t, older, newer)
}

// The reverse order: the replica that read newer inputs finds the head built from older ones
// and replaces it.
func TestEnvironmentReplacesAHeadBuiltFromOlderSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := seedSample(t)
	s.remotes.Commit(sampleWorkload, "main", map[string]*string{"workloads/observability.yaml": workloadAt(t, "./prometheus-1")}, "p-1")
	g := ghfake.New()
	old, err := New(gitcache.New("", s.remotes.URL()), ghfake.Installations{GitHub: g}).Environment(ctx, sampleDev)
	require.NoError(t, err)
	newer := s.remotes.Commit(sampleWorkload, "main", map[string]*string{"workloads/observability.yaml": workloadAt(t, "./prometheus-2")}, "p-2")
	out, err := New(s.cache, ghfake.Installations{GitHub: g}).Environment(ctx, sampleDev)
	require.NoError(t, err)
	require.NotEqual(t, old.Commit, out.Commit)
	require.Equal(t, out.Commit, s.remotes.Head(sampleGitOps, "kalypso/dev"))
	require.Contains(t, s.remotes.Message(sampleGitOps, out.Commit), "Kalypso-Source: workload platform-svc "+newer)
}

func TestCheckForward(t *testing.T) {
	read := []scheduling.SourceCommit{{Name: "dev", Commit: "a1"}, {Name: "workload w", Repo: "https://github.com/o/w", Commit: "b1"}}
	rel := map[string]struct{ descendant, known bool }{"a2": {true, true}, "b0": {false, true}, "zz": {false, false}}
	ancestry := func(_ scheduling.SourceCommit, built string) (bool, bool) {
		r := rel[built]
		return r.descendant, r.known
	}
	require.NoError(t, checkForward(read, map[string]string{"dev": "a1", "workload w": "b1"}, ancestry, true), "the same sources")
	require.NoError(t, checkForward(read, map[string]string{"workload w": "b0"}, ancestry, true), "built from an ancestor")
	require.NoError(t, checkForward(read, nil, ancestry, true), "not built by the app")
	err := checkForward(read, map[string]string{"dev": "a2"}, ancestry, true)
	require.ErrorIs(t, err, ErrOlderInputs)
	require.ErrorContains(t, err, "source dev")
	require.ErrorIs(t, checkForward(read, map[string]string{"workload w": "zz"}, ancestry, true), ErrOlderInputs, "unknown: read again first")
	require.NoError(t, checkForward(read, map[string]string{"workload w": "zz"}, ancestry, false), "still unknown after reading again: not on the branch")
}

func TestCheckForwardFollowsAPinMovedBack(t *testing.T) {
	read := []scheduling.SourceCommit{{Name: "dev", Commit: "e2"}, {Name: "main", Commit: "m1"}, {Name: "workload w", Commit: "w1"}}
	// e2 descends from e1 (the environment branch moved on: a rollback pinned m1 there); m2 descends from m1.
	descendsFrom := map[[2]string]bool{{"e1", "e2"}: true, {"m1", "m2"}: true, {"w1", "w2"}: true}
	ancestry := func(src scheduling.SourceCommit, built string) (bool, bool) {
		return descendsFrom[[2]string{src.Commit, built}], true
	}
	require.NoError(t, checkForward(read, map[string]string{"dev": "e1", "main": "m2"}, ancestry, true),
		"main older than built, pinned by a newer environment branch: a rollback")
	require.ErrorIs(t, checkForward(read, map[string]string{"dev": "e2", "main": "m2"}, ancestry, true), ErrOlderInputs,
		"the same environment branch with an older main: a stale read")
	require.ErrorIs(t, checkForward(read, map[string]string{"dev": "e1", "main": "m2", "workload w": "w2"}, ancestry, true), ErrOlderInputs,
		"a workload is never exempt")
}

func TestSourceTrailers(t *testing.T) {
	msg := "Kalypso: update environment dev\n\nKalypso-Environment: dev\nKalypso-Source: dev " + strings.Repeat("a", 40) +
		"\nKalypso-Source: workload platform svc " + strings.Repeat("b", 40) + "\nKalypso-Source: broken xyz\n"
	require.Equal(t, map[string]string{"dev": strings.Repeat("a", 40), "workload platform svc": strings.Repeat("b", 40)}, sourceTrailers(msg))
}
