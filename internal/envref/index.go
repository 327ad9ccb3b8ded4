package envref

import (
	"context"
	"maps"
	"sort"
	"sync"
	"sync/atomic"
)

// Reader reads what the index is built from.
type Reader interface {
	// Repositories lists the repositories an installation can see.
	Repositories(ctx context.Context, inst int64) ([]Repo, error)
	// Describe reads the environments a control plane declares on main and what each one
	// names; none for a repository without commits.
	Describe(ctx context.Context, inst int64, repo Repo) ([]EnvInfo, error)
}

// Index knows, per installation, the control planes and the repositories they name. It is a
// cache: everything in it is rebuilt from GitHub when missing.
//
// It is safe for concurrent use. Each installation's knowledge is an immutable snapshot that
// readers load without waiting; writers (a first build, a refresh after a push, a rebuild by
// the resync) of one installation take turns and publish a new snapshot, so that a slow
// writer can neither publish into a snapshot that was dropped meanwhile nor lose a newer
// writer's work.
type Index struct {
	r       Reader
	isPlane func(Repo) bool // whether the operator declared a repository a control plane
	mu      sync.Mutex      // guards known
	known   map[int64]*installIndex
}

// installIndex is what the index knows of one installation.
type installIndex struct {
	write sync.Mutex               // held by the one writer of this installation at a time
	snap  atomic.Pointer[snapshot] // nil until first built
}

// snapshot is an installation's control planes and their environments; never changed once
// published.
type snapshot struct {
	planes map[Repo][]EnvInfo
}

// NewIndex returns an empty index that reads repositories through r. Only the repositories for
// which isPlane is true are read as control planes: control planes are declared by the
// operator, never discovered, so that a workload repository cannot become one.
func NewIndex(r Reader, isPlane func(Repo) bool) *Index {
	return &Index{r: r, isPlane: isPlane, known: map[int64]*installIndex{}}
}

// Declared reports whether the operator declared repo a control plane.
func (ix *Index) Declared(repo Repo) bool { return ix.isPlane != nil && ix.isPlane(repo) }

// Environments returns every environment of an installation, building the index if needed.
func (ix *Index) Environments(ctx context.Context, inst int64) ([]EnvInfo, error) {
	snap, err := ix.snapshot(ctx, inst)
	if err != nil {
		return nil, err
	}
	var out []EnvInfo
	for _, envs := range snap.planes {
		out = append(out, envs...)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Env, out[j].Env
		if a.ControlPlane != b.ControlPlane {
			return a.ControlPlane.String() < b.ControlPlane.String()
		}
		return a.Name < b.Name
	})
	return out, nil
}

// Matching returns the environments for which keep is true.
func (ix *Index) Matching(ctx context.Context, inst int64, keep func(EnvInfo) bool) ([]EnvInfo, error) {
	all, err := ix.Environments(ctx, inst)
	if err != nil {
		return nil, err
	}
	var out []EnvInfo
	for _, e := range all {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// IsControlPlane reports whether the index knows repo as a control plane.
func (ix *Index) IsControlPlane(ctx context.Context, inst int64, repo Repo) (bool, error) {
	snap, err := ix.snapshot(ctx, inst)
	if err != nil {
		return false, err
	}
	_, ok := snap.planes[repo]
	return ok, nil
}

// of returns the installation's entry, creating it when missing.
func (ix *Index) of(inst int64) *installIndex {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ii := ix.known[inst]
	if ii == nil {
		ii = &installIndex{}
		ix.known[inst] = ii
	}
	return ii
}

// snapshot returns the installation's snapshot, building it first when there is none yet.
func (ix *Index) snapshot(ctx context.Context, inst int64) (*snapshot, error) {
	ii := ix.of(inst)
	if snap := ii.snap.Load(); snap != nil {
		return snap, nil
	}
	ii.write.Lock()
	defer ii.write.Unlock()
	if snap := ii.snap.Load(); snap != nil { // built while this one waited
		return snap, nil
	}
	return ix.build(ctx, inst, ii)
}

// build reads every declared control plane of the installation and publishes the snapshot;
// ii.write is held.
func (ix *Index) build(ctx context.Context, inst int64, ii *installIndex) (*snapshot, error) {
	repos, err := ix.r.Repositories(ctx, inst)
	if err != nil {
		return nil, err
	}
	snap := &snapshot{planes: map[Repo][]EnvInfo{}}
	for _, r := range repos {
		if !ix.Declared(r) {
			continue
		}
		if envs, err := ix.r.Describe(ctx, inst, r); err == nil && len(envs) > 0 {
			snap.planes[r] = envs
		}
	}
	ii.snap.Store(snap)
	return snap, nil
}

// Refresh re-reads one repository after a push: it may have become (or stopped being) a control plane.
func (ix *Index) Refresh(ctx context.Context, inst int64, repo Repo) error {
	if !ix.Declared(repo) {
		_, err := ix.snapshot(ctx, inst)
		return err
	}
	ii := ix.of(inst)
	ii.write.Lock()
	defer ii.write.Unlock()
	cur := ii.snap.Load()
	if cur == nil { // not built yet: a build reads the repository as it is now
		_, err := ix.build(ctx, inst, ii)
		return err
	}
	envs, err := ix.r.Describe(ctx, inst, repo)
	if err != nil {
		return err
	}
	next := &snapshot{planes: maps.Clone(cur.planes)}
	if len(envs) == 0 {
		delete(next.planes, repo)
	} else {
		next.planes[repo] = envs
	}
	ii.snap.Store(next)
	return nil
}

// Rebuild reads the installation's repositories again and replaces what the index knows of
// it; readers keep the previous snapshot until the new one is complete.
func (ix *Index) Rebuild(ctx context.Context, inst int64) error {
	ii := ix.of(inst)
	ii.write.Lock()
	defer ii.write.Unlock()
	_, err := ix.build(ctx, inst, ii)
	return err
}

// Forget drops an installation, e.g. when the app is uninstalled.
func (ix *Index) Forget(inst int64) {
	ix.mu.Lock()
	delete(ix.known, inst)
	ix.mu.Unlock()
}
