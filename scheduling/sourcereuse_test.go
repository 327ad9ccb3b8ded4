package scheduling

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// identifiedFS is an addressedFS with an identity, that counts the selections made of it.
type identifiedFS struct {
	addressedFS
	id       *int
	selected *int
}

// SourceID implements SourceIdentifier.
func (f identifiedFS) SourceID() any { return f.id }

// SelectFiles implements FileSelector, counting.
func (f identifiedFS) SelectFiles(dir string, pol Policy) ([]SourceFile, error) {
	*f.selected++
	return WalkFiles(f, dir, pol)
}

// A source whose identity did not change is found whole in the parse cache: its files are not
// selected again, and the load gives what a load from scratch gives; a source whose identity
// changed is selected and only its changed file parsed.
func TestCachedLoadReusesIdentifiedSources(t *testing.T) {
	selected := 0
	base := tenancyInputs(map[string]string{"w.yaml": workload("api", "one", "./a")}, map[string]string{"w.yaml": workload("web", "one", "./b")})
	env, main := base.Env.FS.(fstest.MapFS), base.Main.FS.(fstest.MapFS)
	envID, mainID := new(int), new(int)
	inputs := func() Inputs {
		in := base
		in.Env.FS = identifiedFS{addressedFS{env}, envID, &selected}
		in.Main.FS = identifiedFS{addressedFS{main}, mainID, &selected}
		return in
	}
	cache := NewParseCache()
	load := func() *Snapshot {
		want := Load(inputs())
		in := inputs()
		in.Cache = cache
		selected = 0
		got := Load(in)
		require.Equal(t, want, got)
		return got
	}
	first := load()
	require.Equal(t, 2, selected, "a cold cache selects every source")
	require.Len(t, first.Targets, 2)

	load()
	require.Zero(t, selected, "nothing changed: nothing selected")
	require.Zero(t, cache.Misses())

	main["more.yaml"] = &fstest.MapFile{Data: []byte(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: extra}
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
`)}
	mainID = new(int)
	third := load()
	require.Equal(t, 1, selected, "only the changed source is selected")
	require.Equal(t, 1, cache.Misses(), "only its new file is parsed")
	require.Len(t, third.Policies, len(first.Policies)+1, third.Errors.Error())
}
