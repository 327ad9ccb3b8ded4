package scheduling

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// addressedFS is a MapFS that knows the content address of its files, as a git tree does.
type addressedFS struct{ fstest.MapFS }

// FileHash implements FileHasher.
func (a addressedFS) FileHash(name string) (string, bool) {
	f, ok := a.MapFS[name]
	if !ok {
		return "", false
	}
	return string(f.Data), true // the content is its own address
}

// Sub implements fs.SubFS, so that a workload repository's folder keeps its addresses.
func (a addressedFS) Sub(dir string) (fs.FS, error) {
	sub := fstest.MapFS{}
	for p, f := range a.MapFS {
		if rest, ok := strings.CutPrefix(p, dir+"/"); ok {
			sub[rest] = f
		}
	}
	return addressedFS{sub}, nil
}

// addressed gives every source of in content addresses.
func addressed(in Inputs) Inputs {
	in.Env.FS = addressedFS{in.Env.FS.(fstest.MapFS)}
	in.Main.FS = addressedFS{in.Main.FS.(fstest.MapFS)}
	in.Workloads = TreeWorkloads(addressedFS{in.Workloads.(treeWorkloads).fsys.(fstest.MapFS)}, "wl:")
	return in
}

// twoTeams is the tenancy control plane with two targets for each team's workload, team-b's
// registration giving workspace workspaceB.
func twoTeams(workspaceB string) Inputs {
	w := func(name string) string {
		return workload(name, "one", "./"+name) + `    - name: two
      environment: dev
      manifests: {repo: "https://github.com/org/` + name + `-gitops", branch: main, path: two}
`
	}
	in := tenancyInputs(map[string]string{"w.yaml": w("api")}, map[string]string{"w.yaml": w("web")})
	regs := in.Main.FS.(fstest.MapFS)["regs.yaml"]
	regs.Data = []byte(strings.Replace(string(regs.Data), "workspace: team-b", "workspace: "+workspaceB, 1))
	return addressed(in)
}

// A load through the parse cache shares the deployment targets of the previous load while
// their workload and its registration stay the same, and makes new ones, equal to those of a
// load from scratch, for the workload whose registration changed.
func TestCachedLoadSharesUnchangedTargets(t *testing.T) {
	cache := NewParseCache()
	load := func(in Inputs) *Snapshot {
		want := Load(in)
		in.Cache = cache
		got := Load(in)
		require.Equal(t, want, got)
		require.Empty(t, got.Errors)
		require.Len(t, got.Targets, 4)
		return got
	}
	first := load(twoTeams("team-b"))
	second := load(twoTeams("team-b"))
	for i := range first.Targets {
		require.Same(t, first.Targets[i], second.Targets[i], second.Targets[i].Name)
	}
	moved := load(twoTeams("team-c"))
	for i, tgt := range moved.Targets {
		if tgt.Workload == "web" {
			require.NotSame(t, second.Targets[i], tgt)
			require.Equal(t, "team-c", tgt.Workspace)
			continue
		}
		require.Same(t, second.Targets[i], tgt, tgt.Name)
	}
}

// Deployment targets of the same name are kept once, the first produced, whatever the order
// of their names; each other one is an error naming where the kept one is.
func TestDuplicateTargetNamesKeepTheFirst(t *testing.T) {
	in := tenancyInputs(map[string]string{"w.yaml": workload("a", "b-c", "./first")},
		map[string]string{"w.yaml": workload("z", "y", "./z")})
	in.Env.FS.(fstest.MapFS)["targets.yaml"] = &fstest.MapFile{Data: []byte(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: DeploymentTarget
metadata: {name: a-b-c}
spec: {environment: dev, manifests: {repo: "https://github.com/org/x", branch: main, path: second}}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: DeploymentTarget
metadata: {name: b}
spec: {environment: dev, manifests: {repo: "https://github.com/org/x", branch: main, path: b}}
`)}
	snap := Load(in)
	var kept []string
	for _, tgt := range snap.Targets {
		kept = append(kept, tgt.Name+" "+tgt.Manifests["path"])
	}
	require.Equal(t, []string{"a-b-c ./first", "b b", "z-y ./z"}, kept, snap.Errors.Error())
	require.Contains(t, snap.Errors.Error(), `dev:targets.yaml:1: DeploymentTarget "a-b-c": deployment target name "a-b-c" is also produced at wl:org/app-a/main/deploy/w.yaml:7; this one is ignored`)
}

// Names contested by two registrations are found the same through the parse cache, load after
// load, with and without the control plane's history.
func TestCachedLoadFindsContestedNames(t *testing.T) {
	cache := NewParseCache()
	teamA := map[string]string{"w.yaml": workload("a", "b-c", "./a")}
	teamB := map[string]string{"w.yaml": workload("a-b", "c", "./b"), "v.yaml": workload("v", "x", "./v")}
	for _, history := range []bool{false, false, true, true, false} {
		in := addressed(tenancyInputs(teamA, teamB))
		if history {
			in.Seniority = func(r *WorkloadRegistration) int64 { return map[string]int64{"team-a": 1}[r.Name] }
		}
		want := Load(in)
		in.Cache = cache
		got := Load(in)
		require.Equal(t, want, got)
		if history {
			require.Equal(t, []string{"a-b-c@team-b", "v-x@team-b"}, targetNames(got))
			continue
		}
		require.Equal(t, []string{"v-x@team-b"}, targetNames(got))
		require.Contains(t, got.Errors.Error(), `wl:org/app-a/main/deploy/w.yaml:1: Workload "a": deployment target name "a-b-c" is also produced at wl:org/app-b/main/deploy/w.yaml:1 (registration "team-b")`)
		require.Contains(t, got.Errors.Error(), `wl:org/app-b/main/deploy/w.yaml:1: Workload "a-b": deployment target name "a-b-c" is also produced at wl:org/app-a/main/deploy/w.yaml:1 (registration "team-a")`)
	}
}

// Through the parse cache, names that become contested when one registration's workload
// changes (the other's staying the same), or stop being contested when one goes, are found
// as a load from scratch finds them: the count of names the cache keeps follows each change.
func TestCachedLoadFollowsContestedNames(t *testing.T) {
	cache := NewParseCache()
	teamA := map[string]string{"w.yaml": workload("a", "b-c", "./a")}
	v := workload("v", "x", "./v")
	for i, step := range []struct {
		teamB     map[string]string
		contested bool
	}{
		{map[string]string{"w.yaml": workload("b", "y", "./b"), "v.yaml": v}, false},
		{map[string]string{"w.yaml": workload("a-b", "c", "./b"), "v.yaml": v}, true}, // a-b-c, as team-a's a with b-c
		{map[string]string{"w.yaml": workload("b", "y", "./b"), "v.yaml": v}, false},
		{map[string]string{"w.yaml": workload("b", "y", "./b"), "v.yaml": v, "u.yaml": workload("a", "other", "./u")}, true}, // Workload a
		{map[string]string{"w.yaml": workload("b", "y", "./b"), "v.yaml": v}, false},
		{map[string]string{"v.yaml": v, "u.yaml": v}, false}, // twice in one registration: defined twice, not contested
		{map[string]string{"v.yaml": v}, false},
	} {
		in := addressed(tenancyInputs(teamA, step.teamB))
		want := Load(in)
		in.Cache = cache
		got := Load(in)
		require.Equal(t, want, got, "step %d", i)
		require.Equal(t, step.contested, strings.Contains(got.Errors.Error(), "is also produced"), "step %d: %v", i, got.Errors)
	}
}
