package render

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Every content comes back exactly, whatever the namespace and however it overlaps itself
// or the boundaries of the content, and the same content and namespace give equal Files
// from any cutter. Half of the files are made of two patterns per target and kind of file,
// with the namespace put where the pattern has `@`, so that the target's previous skeletons
// are often, and sometimes nearly, the right ones. The earlier files tried first are those
// last made for a random target, whatever their namespace.
func TestSkeletonsGiveBackTheContent(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	shared, other := newCutter(), newCutter()
	targets := []*scheduling.DeploymentTarget{{}, {}, {}}
	var patterns [3][3][2]string
	for i := range patterns {
		for j := range patterns[i] {
			for k := range patterns[i][j] {
				patterns[i][j][k] = randomText(rnd, rnd.IntN(20)) + "@" + randomText(rnd, rnd.IntN(20)) + "@"
			}
		}
	}
	last := make([]Files, len(targets))
	for i := range 5000 {
		ns, target := randomText(rnd, rnd.IntN(9)), rnd.IntN(len(targets))
		var contents [3][]byte
		for j := range contents {
			contents[j] = []byte(randomText(rnd, rnd.IntN(40)))
			switch rnd.IntN(4) {
			case 0:
				contents[j] = []byte(ns + string(contents[j]) + ns + ns)
			case 1, 2:
				contents[j] = []byte(strings.ReplaceAll(patterns[target][j][rnd.IntN(2)], "@", ns))
			}
		}
		shell := rnd.IntN(2) == 0
		f := shared.files(contents, ns, shell, targets[target], &earlierOutput{files: last[rnd.IntN(len(last))], looked: true})
		last[target] = f
		require.Equal(t, f, other.files(contents, ns, shell, nil, nil), "case %d", i)
		require.Equal(t, f, (&cutter{}).files(contents, ns, shell, nil, nil), "case %d", i)
		want := NewFiles(contents[0], contents[1], contents[2], shell)
		require.Equal(t, want.Map(), f.Map(), "case %d: ns %q", i, ns)
		for _, name := range []string{ReconcilerFile, NamespaceFile, ConfigFileYAML, ConfigFileSh} {
			require.Equal(t, want.File(name), f.File(name), "case %d: %s", i, name)
		}
		require.Equal(t, want.Len(), f.Len())
	}
}

// randomText is n characters from a small alphabet, so that a namespace often occurs in
// the contents, overlapping itself.
func randomText(rnd *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte("ab-\n"[rnd.IntN(4)])
	}
	return b.String()
}

// The namespace is cut out at every occurrence, leftmost first; a namespace too short to
// pay for its cut is not.
func TestSkeletonCuts(t *testing.T) {
	c := newCutter()
	f := c.files([3][]byte{[]byte("ns-ab-ab-abc: ns-ab-ab-ab"), []byte(""), []byte("x")}, "ns-ab-ab", false, nil, nil)
	require.Equal(t, "ns-ab-ab", f.ns)
	require.Equal(t, "-abc: -ab", string(f.rec.text()))
	require.Equal(t, 2, f.rec.cuts())
	require.Equal(t, "ns-ab-ab-abc: ns-ab-ab-ab", string(f.File(ReconcilerFile)))
	require.NotNil(t, f.File(NamespaceFile), "an empty file exists")

	short := c.files([3][]byte{[]byte("abcd abcd"), nil, nil}, "abcd", false, nil, nil)
	require.Zero(t, short.rec.cuts())
	require.Empty(t, short.ns, "a namespace is kept only when it was cut out")
}

// Rendered files that differ only by their assignment's namespace share one skeleton: a
// fleet's outputs hold each reconciler (of two kinds) and namespace once per deployment
// target and each platform config once per cluster type, in each worker.
func TestRenderedFilesShareSkeletons(t *testing.T) {
	spec := fleet.DefaultSpec()
	spec.ClusterTypes, spec.Workloads = 10, 10
	f := fleet.New(spec)
	res := Environment(scheduling.Load(f.Inputs()))
	require.Equal(t, f.Assignments(), res.Outputs.Len())
	seen := map[*skeleton]bool{}
	for key, files := range res.Outputs.All() {
		require.NotEmpty(t, files.ns, key)
		seen[files.rec], seen[files.nsf], seen[files.cfg] = true, true, true
		require.Contains(t, string(files.File(NamespaceFile)), files.ns, key)
	}
	targets := spec.Workloads * spec.TargetsPerWorkload
	most := runtime.GOMAXPROCS(0) * (3*targets + spec.ClusterTypes)
	require.LessOrEqual(t, len(seen), most, "skeletons of %d outputs", res.Outputs.Len())
}
