package envref

import (
	"context"
	"sort"
	"sync"
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
type Index struct {
	r       Reader
	isPlane func(Repo) bool // whether the operator declared a repository a control plane
	mu      sync.Mutex
	known   map[int64]map[Repo][]EnvInfo // installation → control plane → environments
}

// NewIndex returns an empty index that reads repositories through r. Only the repositories for
// which isPlane is true are read as control planes: control planes are declared by the
// operator, never discovered, so that a workload repository cannot become one.
func NewIndex(r Reader, isPlane func(Repo) bool) *Index {
	return &Index{r: r, isPlane: isPlane, known: map[int64]map[Repo][]EnvInfo{}}
}

// Declared reports whether the operator declared repo a control plane.
func (ix *Index) Declared(repo Repo) bool { return ix.isPlane != nil && ix.isPlane(repo) }

// Environments returns every environment of an installation, building the index if needed.
func (ix *Index) Environments(ctx context.Context, inst int64) ([]EnvInfo, error) {
	planes, err := ix.installation(ctx, inst)
	if err != nil {
		return nil, err
	}
	var out []EnvInfo
	for _, envs := range planes {
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
	planes, err := ix.installation(ctx, inst)
	if err != nil {
		return false, err
	}
	_, ok := planes[repo]
	return ok, nil
}

func (ix *Index) installation(ctx context.Context, inst int64) (map[Repo][]EnvInfo, error) {
	ix.mu.Lock()
	planes, ok := ix.known[inst]
	ix.mu.Unlock()
	if ok {
		return planes, nil
	}
	repos, err := ix.r.Repositories(ctx, inst)
	if err != nil {
		return nil, err
	}
	planes = map[Repo][]EnvInfo{}
	for _, r := range repos {
		if !ix.Declared(r) {
			continue
		}
		if envs, err := ix.r.Describe(ctx, inst, r); err == nil && len(envs) > 0 {
			planes[r] = envs
		}
	}
	ix.mu.Lock()
	ix.known[inst] = planes
	ix.mu.Unlock()
	return planes, nil
}

// Refresh re-reads one repository after a push: it may have become (or stopped being) a control plane.
func (ix *Index) Refresh(ctx context.Context, inst int64, repo Repo) error {
	if _, err := ix.installation(ctx, inst); err != nil {
		return err
	}
	if !ix.Declared(repo) {
		return nil
	}
	envs, err := ix.r.Describe(ctx, inst, repo)
	if err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if len(envs) == 0 {
		delete(ix.known[inst], repo)
	} else {
		ix.known[inst][repo] = envs
	}
	return nil
}

// Forget drops an installation, e.g. when the app is uninstalled.
func (ix *Index) Forget(inst int64) {
	ix.mu.Lock()
	delete(ix.known, inst)
	ix.mu.Unlock()
}
