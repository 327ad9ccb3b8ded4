package render_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// hashedFS is a MapFS that knows the content address of its files, as a git tree does.
type hashedFS struct{ fstest.MapFS }

// FileHash implements scheduling.FileHasher.
func (h hashedFS) FileHash(name string) (string, bool) {
	f, ok := h.MapFS[name]
	if !ok {
		return "", false
	}
	sum := sha256.Sum256(f.Data)
	return hex.EncodeToString(sum[:]), true
}

// Sub implements fs.SubFS, so that a workload repository's folder keeps its addresses.
func (h hashedFS) Sub(dir string) (fs.FS, error) {
	sub := fstest.MapFS{}
	for p, f := range h.MapFS {
		if rest, ok := strings.CutPrefix(p, dir+"/"); ok {
			sub[rest] = f
		}
	}
	return hashedFS{sub}, nil
}

// hashed is w's inputs with content addresses on every source; damage, when set, changes the
// environment branch's files first.
func hashed(w *world, damage func(fstest.MapFS)) scheduling.Inputs {
	in := w.inputs()
	env, main, workloads := w.files()
	if damage != nil {
		damage(env)
	}
	in.Env.FS, in.Main.FS = hashedFS{env}, hashedFS{main}
	in.Workloads = scheduling.TreeWorkloads(hashedFS{workloads}, "workloads:")
	return in
}

// corruption damages a random YAML file at a random place, the same for the same seeds: a
// character removed, doubled or replaced by one that matters to YAML, so that syntax and field
// errors land anywhere.
func corruption(seed, step uint64) func(fstest.MapFS) {
	return func(fsys fstest.MapFS) {
		rng := rand.New(rand.NewPCG(seed, step))
		var names []string
		for _, n := range sortedKeys(fsys) {
			if strings.HasSuffix(n, ".yaml") && len(fsys[n].Data) > 0 {
				names = append(names, n)
			}
		}
		name := names[rng.IntN(len(names))]
		data := []byte(string(fsys[name].Data))
		i := rng.IntN(len(data))
		switch rng.IntN(3) {
		case 0:
			data = append(data[:i], data[i+1:]...)
		case 1:
			data = append(data[:i+1], data[i:]...)
		default:
			const special = ":- \n\t\"'{["
			data[i] = special[rng.IntN(len(special))]
		}
		fsys[name] = &fstest.MapFile{Data: data}
	}
}

// TestLoadWithCacheEqualsLoad applies random edits of every kind to generated control planes,
// and at some steps damages a random file at a random place, and checks after every step that
// loading with a parse cache kept from step to step gives the snapshot loading from scratch
// gives — objects, positions, errors and all — and that the cache parsed only files it did
// not hold before.
func TestLoadWithCacheEqualsLoad(t *testing.T) {
	const seeds, steps = 4, 80
	hits, parsed := 0, 0
	for seed := range uint64(seeds) {
		w := newWorld(seed)
		cache := scheduling.NewParseCache()
		for step := range steps {
			all := edits()
			e := all[w.rng.IntN(len(all))]
			for !e.apply(w) {
				e = all[w.rng.IntN(len(all))]
			}
			var damage func(fstest.MapFS)
			if w.rng.IntN(3) == 0 {
				damage = corruption(seed, uint64(step))
			}
			want := scheduling.Load(hashed(w, damage))
			in := hashed(w, damage)
			in.Cache = cache
			got := scheduling.Load(in)
			where := fmt.Sprintf("seed %d step %d (%s %s)", seed, step, e.kind, e.op)
			require.Equal(t, want, got, where)
			require.LessOrEqual(t, cache.Misses(), cache.Len(), where)
			parsed += cache.Misses()
			hits += cache.Len() - cache.Misses()
			mutate(got) // what later code does to a snapshot never reaches the cache
		}
	}
	require.Greater(t, hits, 4*parsed, "most files come from the cache")
	t.Logf("%d steps: %d files from the cache, %d parsed", seeds*steps, hits, parsed)
}

// mutate changes what loading and later code may change in a snapshot: the labels, names,
// positions and registrations of objects, and errors. (Specs are shared with the cache: nothing
// changes them after decoding.)
func mutate(s *scheduling.Snapshot) {
	objects := []*scheduling.Object{}
	for _, c := range s.ClusterTypes {
		objects = append(objects, &c.Object)
	}
	for _, w := range s.Workloads {
		objects = append(objects, &w.Object)
		w.Registration = nil
	}
	for _, x := range s.Policies {
		objects = append(objects, &x.Object)
	}
	for _, x := range s.ConfigMaps {
		objects = append(objects, &x.Object)
	}
	for _, x := range s.Templates {
		objects = append(objects, &x.Object)
	}
	objects = append(objects, s.Broken...)
	for _, o := range objects {
		for k := range o.Labels {
			o.Labels[k] = "changed"
		}
		o.Name, o.Pos.Line = "changed", -1
	}
	for _, e := range s.Errors {
		e.Msg, e.Pos.Line = "changed", -1
	}
}

// TestLoadWithCacheParsesOnlyChangedFiles loads a control plane twice with one file changed in
// between: the second load parses that file alone.
func TestLoadWithCacheParsesOnlyChangedFiles(t *testing.T) {
	w := newWorld(1)
	cache := scheduling.NewParseCache()
	in := hashed(w, nil)
	in.Cache = cache
	first := scheduling.Load(in)
	require.Equal(t, cache.Len(), cache.Misses(), "a cold cache parses every file")
	require.Greater(t, cache.Len(), 10)

	in = hashed(w, nil)
	in.Cache = cache
	require.Equal(t, first, scheduling.Load(in))
	require.Zero(t, cache.Misses(), "nothing changed, nothing parsed")

	in = hashed(w, func(env fstest.MapFS) {
		name := sortedKeys(env)[0]
		env[name] = &fstest.MapFile{Data: append([]byte("# edited\n"), env[name].Data...)}
	})
	in.Cache = cache
	scheduling.Load(in)
	require.Equal(t, 1, cache.Misses(), "one file changed, one parsed")
}

// TestLoadWithCacheFollowsTheRegistration loads the same workload file, unchanged, under a
// registration whose name and workspace change from load to load: the deployment targets
// derived from it follow (labels, workspace), as loading from scratch finds them.
func TestLoadWithCacheFollowsTheRegistration(t *testing.T) {
	const workload = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: app, labels: {tier: web}}
spec:
  deploymentTargets:
    - {name: a, environment: dev, labels: {size: s}, manifests: {repo: https://github.com/org/app, branch: main, path: a}}
`
	inputs := func(reg, workspace string) scheduling.Inputs {
		env := `apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata: {name: ` + reg + `}
spec: {workload: {repo: https://github.com/org/app, branch: main, path: deploy}, workspace: ` + workspace + `}
`
		return scheduling.Inputs{
			Environment: "dev",
			Env:         scheduling.Source{FS: hashedFS{fstest.MapFS{"env.yaml": {Data: []byte(env)}}}, Prefix: "dev:"},
			Workloads:   scheduling.TreeWorkloads(hashedFS{fstest.MapFS{"org/app/main/deploy/w.yaml": {Data: []byte(workload)}}}, "wl:"),
		}
	}
	cache := scheduling.NewParseCache()
	for _, step := range []struct{ reg, workspace string }{{"app", "team"}, {"app", "team"}, {"app", "other"}, {"renamed", "other"}, {"app", "team"}} {
		want := scheduling.Load(inputs(step.reg, step.workspace))
		in := inputs(step.reg, step.workspace)
		in.Cache = cache
		got := scheduling.Load(in)
		require.Equal(t, want, got, "%+v", step)
		require.Len(t, got.Targets, 1)
		require.Equal(t, step.workspace, got.Targets[0].Workspace)
		require.Equal(t, "dev-"+step.reg, got.Targets[0].Labels["kustomize.toolkit.fluxcd.io/name"])
	}
}
