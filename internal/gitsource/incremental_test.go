package gitsource_test

import (
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/internal/fleetgit"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// gitWorld is a small fleet held in git, edited at random.
type gitWorld struct {
	t      *testing.T
	rng    *rand.Rand
	f      *fleet.Fleet
	repos  *fleetgit.Repos
	broken map[string][]byte // file → its content before it was damaged
	n      int               // names of added files
}

// sourceEdit is one random change of the fleet's files; it reports whether it applied.
type sourceEdit struct {
	name  string
	apply func(w *gitWorld) bool
}

// pick returns a random path of fsys below dir with the given suffix ("" when there is none).
func (w *gitWorld) pick(fsys fstest.MapFS, dir, suffix string) string {
	var names []string
	for p := range fsys {
		if strings.HasPrefix(p, dir) && strings.HasSuffix(p, suffix) {
			names = append(names, p)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return names[w.rng.IntN(len(names))]
}

// fsOf is one of the fleet's file sets: the environment branch, main or the workload repositories.
func (w *gitWorld) fsOf() (fstest.MapFS, string) {
	switch w.rng.IntN(4) {
	case 0:
		return w.f.Main, ""
	case 1:
		return w.f.Workloads, ""
	default:
		return w.f.Env, ""
	}
}

func sourceEdits() []sourceEdit {
	return []sourceEdit{
		{"change a file", func(w *gitWorld) bool {
			fsys, dir := w.fsOf()
			p := w.pick(fsys, dir, ".yaml")
			if p == "" || w.broken[p] != nil {
				return false
			}
			fsys[p] = &fstest.MapFile{Data: append(slices.Clip(fsys[p].Data), fmt.Sprintf("# edit %d\n", w.rng.IntN(1000))...)}
			return true
		}},
		{"add a cluster type", func(w *gitWorld) bool {
			w.n++
			name := fmt.Sprintf("added-%d", w.n)
			dir := path.Dir(w.pick(w.f.Env, "", ".yaml"))
			w.f.Env[path.Join(dir, name+".yaml")] = &fstest.MapFile{Data: fmt.Appendf(nil,
				"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: %s\n  labels: {group: g0}\nspec:\n  reconciler: arc-flux\n  namespaceService: default\n", name)}
			return true
		}},
		{"remove a file", func(w *gitWorld) bool {
			fsys, dir := w.fsOf()
			p := w.pick(fsys, dir, ".yaml")
			if p == "" || strings.HasSuffix(p, "base-repo.yaml") {
				return false
			}
			delete(fsys, p)
			delete(w.broken, p)
			return true
		}},
		{"rename a file", func(w *gitWorld) bool {
			fsys, dir := w.fsOf()
			p := w.pick(fsys, dir, ".yaml")
			if p == "" || strings.HasSuffix(p, "base-repo.yaml") {
				return false
			}
			to := path.Join(path.Dir(p), fmt.Sprintf("renamed-%d-%s", w.rng.IntN(100), path.Base(p)))
			fsys[to] = fsys[p]
			delete(fsys, p)
			if b, ok := w.broken[p]; ok {
				delete(w.broken, p)
				w.broken[to] = b
			}
			return true
		}},
		{"move a folder", func(w *gitWorld) bool {
			p := w.pick(w.f.Env, "", ".yaml")
			dir := path.Dir(p)
			if dir == "." {
				return false
			}
			to := fmt.Sprintf("moved-%d/%s", w.rng.IntN(3), path.Base(dir))
			for name, f := range maps.Clone(w.f.Env) {
				if rest, ok := strings.CutPrefix(name, dir+"/"); ok {
					delete(w.f.Env, name)
					w.f.Env[to+"/"+rest] = f
					if b, ok := w.broken[name]; ok {
						delete(w.broken, name)
						w.broken[to+"/"+rest] = b
					}
				}
			}
			return true
		}},
		{"damage a file", func(w *gitWorld) bool {
			fsys, dir := w.fsOf()
			p := w.pick(fsys, dir, ".yaml")
			if p == "" || w.broken[p] != nil {
				return false
			}
			w.broken[p] = fsys[p].Data
			data := slices.Clone(fsys[p].Data)
			data[w.rng.IntN(len(data))] = ":- \"'{["[w.rng.IntN(7)]
			fsys[p] = &fstest.MapFile{Data: data}
			return true
		}},
		{"repair a file", func(w *gitWorld) bool {
			for _, p := range slices.Sorted(maps.Keys(w.broken)) {
				for _, fsys := range []fstest.MapFS{w.f.Env, w.f.Main, w.f.Workloads} {
					if f, ok := fsys[p]; ok && f != nil {
						fsys[p] = &fstest.MapFile{Data: w.broken[p]}
					}
				}
				delete(w.broken, p)
				return true
			}
			return false
		}},
		{"ignore a folder", func(w *gitWorld) bool {
			dir := path.Dir(w.pick(w.f.Env, "", ".yaml"))
			if dir == "." {
				return false
			}
			w.f.Env[".sourceignore"] = &fstest.MapFile{Data: []byte("# ignored\n" + dir + "/\n")}
			return true
		}},
		{"ignore nothing", func(w *gitWorld) bool {
			if _, ok := w.f.Env[".sourceignore"]; !ok {
				return false
			}
			delete(w.f.Env, ".sourceignore")
			return true
		}},
		{"ignore a workload's file or not", func(w *gitWorld) bool {
			p := fmt.Sprintf("%s/%s/main/.sourceignore", fleet.Owner, w.f.WorkloadName(w.rng.IntN(w.f.Spec.Workloads)))
			if _, ok := w.f.Workloads[p]; ok {
				delete(w.f.Workloads, p)
			} else {
				w.f.Workloads[p] = &fstest.MapFile{Data: []byte("workloads/workload.yaml\n")}
			}
			return true
		}},
		{"a file over the size limit", func(w *gitWorld) bool {
			w.n++
			w.f.Env[fmt.Sprintf("big-%d.yaml", w.n)] = &fstest.MapFile{Data: []byte("# " + strings.Repeat("x", maxFileBytes) + "\n")}
			return true
		}},
		{"files over the source's limit", func(w *gitWorld) bool {
			for range 6 {
				w.n++
				w.f.Env[fmt.Sprintf("extra/e-%d.yaml", w.n)] = &fstest.MapFile{Data: []byte("# extra\n")}
			}
			return true
		}},
		{"files under the source's limit again", func(w *gitWorld) bool {
			n := 0
			for p := range maps.Clone(w.f.Env) {
				if strings.HasPrefix(p, "extra/") || strings.HasPrefix(p, "big-") {
					delete(w.f.Env, p)
					n++
				}
			}
			return n > 0
		}},
		{"a workload repository outside its folder", func(w *gitWorld) bool {
			w.n++
			w.f.Workloads[fmt.Sprintf("%s/%s/main/elsewhere/x-%d.yaml", fleet.Owner, w.f.WorkloadName(0), w.n)] = &fstest.MapFile{Data: []byte("kind: Workload\n")}
			return true
		}},
	}
}

const maxFileBytes = 2000

// TestIncrementalReadEqualsReadFromScratch applies random edits to a fleet held in git (files
// added, changed, removed and renamed, a folder moved, main's pin moved by a main change, a
// file damaged and repaired, .sourceignore added and removed, files over the file and source
// limits) and checks after each that reading its sources through a Cache kept from step to
// step, and loading them with a parse cache, gives what reading and loading from scratch
// gives: the same files with the same content, limit errors and snapshots (deep equal, errors
// included).
func TestIncrementalReadEqualsReadFromScratch(t *testing.T) {
	const seeds, steps = 3, 60
	reused, read := 0, 0
	for seed := range uint64(seeds) {
		f := fleet.New(fleet.Spec{ClusterTypes: 12, Workloads: 3, TargetsPerWorkload: 2, Configs: 5, Policies: 4})
		repos, err := fleetgit.New(f)
		require.NoError(t, err)
		w := &gitWorld{t: t, rng: rand.New(rand.NewPCG(seed, 7)), f: f, repos: repos, broken: map[string][]byte{}}
		pol := scheduling.Policy{MaxFileBytes: maxFileBytes, MaxSourceFiles: len(f.Env) + 4}
		cache, parses := gitsource.NewCache(), scheduling.NewParseCache()
		for step := range steps {
			all := sourceEdits()
			e := all[w.rng.IntN(len(all))]
			for !e.apply(w) {
				e = all[w.rng.IntN(len(all))]
			}
			require.NoError(t, repos.Sync())
			where := fmt.Sprintf("seed %d step %d (%s)", seed, step, e.name)

			want, wantErrs, wantErr := repos.Inputs(nil, pol)
			got, gotErrs, gotErr := repos.Inputs(cache, pol)
			require.Equal(t, wantErr, gotErr, where)
			require.Equal(t, wantErrs, gotErrs, where)
			if wantErr != nil {
				cache.Sweep()
				continue
			}
			require.Equal(t, files(t, want.Env.FS, pol), files(t, got.Env.FS, pol), where)
			require.Equal(t, files(t, want.Main.FS, pol), files(t, got.Main.FS, pol), where)
			got.Cache = parses
			require.Equal(t, scheduling.Load(want), scheduling.Load(got), where)
			stats := cache.Sweep()
			reused += stats.SourcesReused
			read += stats.SourcesRead
		}
	}
	require.Greater(t, reused, read, "most sources are not read again")
	t.Logf("%d steps: %d sources reused, %d read", seeds*steps, reused, read)
}

// files is what loading reads of fsys: the files selected, with their size and content, or
// the error of a breach of the source's limits.
func files(t *testing.T, fsys fs.FS, pol scheduling.Policy) map[string]string {
	selected, err := scheduling.SelectFiles(fsys, "", pol)
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	out := map[string]string{}
	for _, f := range selected {
		data, err := fs.ReadFile(fsys, f.Path)
		if err != nil {
			out[f.Path] = fmt.Sprintf("%d bytes: %v", f.Size, err)
			continue
		}
		out[f.Path] = fmt.Sprintf("%d bytes: %s", f.Size, data)
	}
	return out
}

// TestReadFollowsTheChange reads a fleet's sources, changes one file of the environment
// branch, and reads them again through the cache: only that branch is read again, and of it
// only the trees on the changed path and the changed blob; a change outside a workload
// repository's registered folder reads nothing of it.
func TestReadFollowsTheChange(t *testing.T) {
	f := fleet.New(fleet.Spec{ClusterTypes: 40, Workloads: 4, TargetsPerWorkload: 2, Configs: 5, Policies: 4})
	repos, err := fleetgit.New(f)
	require.NoError(t, err)
	cache := gitsource.NewCache()
	readAll := func() gitsource.CacheStats {
		in, _, err := repos.Inputs(cache, scheduling.Policy{})
		require.NoError(t, err)
		for i := range f.Spec.Workloads {
			_, err := in.Workloads.Workload(scheduling.ManifestsSpec{Repo: f.WorkloadRepo(i), Branch: "main", Path: "workloads"})
			require.NoError(t, err)
		}
		return cache.Sweep()
	}
	first := readAll()
	require.Equal(t, 2+f.Spec.Workloads, first.SourcesRead, "main, the environment branch and every workload folder")
	require.Positive(t, first.BlobsRead)

	require.NoError(t, fleet.Replace(f.Env, f.ClusterTypeFile(3), "namespaceService: default", "namespaceService: other"))
	f.Workloads[fleet.Owner+"/"+f.WorkloadName(1)+"/main/docs/readme.yaml"] = &fstest.MapFile{Data: []byte("kind: Other\n")}
	require.NoError(t, repos.Sync())
	require.Equal(t, gitsource.CacheStats{
		SourcesReused: 2 + f.Spec.Workloads, // main (for the declarations, then as pinned) and every workload folder
		SourcesRead:   1,                    // the environment branch
		TreesListed:   2,                    // its root and the folder of the changed file
		BlobsRead:     1,                    // the changed file
	}, readAll())
}
