package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// EnvInfo is what the index knows of an environment: where it reads from and writes to.
type EnvInfo struct {
	Env          Env
	Branch       string // the control-plane branch of the environment
	GitOps       Repo
	GitOpsBranch string
	GitOpsPath   string // the folder the environment's manifests are written below
	Workloads    []RepoBranch
}

// RepoBranch is a branch of a repository.
type RepoBranch struct {
	Repo   Repo
	Branch string
}

// Index knows, per installation, the control planes and the repositories they name. It is a
// cache: everything in it is rebuilt from GitHub when missing.
type Index struct {
	r       *Reconciler
	isPlane func(Repo) bool // whether the operator declared a repository a control plane
	mu      sync.Mutex
	known   map[int64]map[Repo][]EnvInfo // installation → control plane → environments
}

// NewIndex returns an empty index that reads repositories through r. Only the repositories for
// which isPlane is true are read as control planes: control planes are declared by the
// operator, never discovered, so that a workload repository cannot become one.
func NewIndex(r *Reconciler, isPlane func(Repo) bool) *Index {
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
	gh, err := ix.r.clients.Client(ctx, inst)
	if err != nil {
		return nil, err
	}
	planes = map[Repo][]EnvInfo{}
	opts := &github.ListOptions{PerPage: 100}
	for {
		list, resp, err := gh.Apps.ListRepos(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list repositories of installation %d: %w", inst, err)
		}
		for _, repo := range list.Repositories {
			r := Repo{Owner: repo.GetOwner().GetLogin(), Name: repo.GetName()}
			if !ix.Declared(r) {
				continue
			}
			if envs, err := ix.r.describe(ctx, inst, r); err == nil && len(envs) > 0 {
				planes[r] = envs
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
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
	envs, err := ix.r.describe(ctx, inst, repo)
	if err != nil && !errors.Is(err, gitcache.ErrEmpty) {
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

// describe reads the environments a repository declares on main and what each one names.
func (r *Reconciler) describe(ctx context.Context, inst int64, repo Repo) ([]EnvInfo, error) {
	token, err := r.clients.Token(ctx, inst)
	if err != nil {
		return nil, err
	}
	unlock := r.cache.Lock(repo.Owner, repo.Name)
	defer unlock()
	local, err := r.cache.Fetch(ctx, repo.Owner, repo.Name, token)
	if err != nil {
		return nil, err
	}
	head := gitcache.Head(local, gitsource.MainBranch)
	if head.IsZero() {
		return nil, nil
	}
	fsys, err := gitsource.TreeFS(local, head)
	if err != nil {
		return nil, err
	}
	envs, _ := scheduling.LoadEnvironments(scheduling.Source{FS: fsys})
	var out []EnvInfo
	for _, e := range envs {
		info := EnvInfo{Env: Env{Installation: inst, ControlPlane: repo, Name: e.Name}, Branch: e.Spec.ControlPlane.Branch}
		if in, _, err := gitsource.Inputs(local, e.Name, refusing{}); err == nil {
			snap := scheduling.Load(in)
			fillTargets(&info, snap)
		}
		out = append(out, info)
	}
	return out, nil
}

// fillTargets records the GitOps repository and the workload branches of an environment.
func fillTargets(info *EnvInfo, snap *scheduling.Snapshot) {
	if snap.GitOpsRepo != nil {
		if g, err := repoOf(snap.GitOpsRepo.Spec.Repo); err == nil {
			info.GitOps, info.GitOpsBranch = g, snap.GitOpsRepo.Spec.Branch
			info.GitOpsPath, _ = scheduling.SubPath(snap.GitOpsRepo.Spec.Path)
		}
	}
	for _, reg := range snap.Registrations {
		if w, err := repoOf(reg.Spec.Workload.Repo); err == nil {
			info.Workloads = append(info.Workloads, RepoBranch{Repo: w, Branch: reg.Spec.Workload.Branch})
		}
	}
}

// refusing is a workload source that reads nothing: the index only needs the registrations.
type refusing struct{}

// Workload implements scheduling.WorkloadSource.
func (refusing) Workload(scheduling.ManifestsSpec) (scheduling.Source, error) {
	return scheduling.Source{}, errors.New("not read")
}
