package reconcile

import (
	"context"
	"fmt"

	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// cachedWorkloads reads registered workload repositories through the git cache.
type cachedWorkloads struct {
	ctx      context.Context
	cache    *gitcache.Cache
	token    string
	maxBytes int64 // largest file read (0: no limit)
}

// Workload implements scheduling.WorkloadSource.
func (w *cachedWorkloads) Workload(spec scheduling.ManifestsSpec) (scheduling.Source, error) {
	repo, err := repoOf(spec.Repo)
	if err != nil {
		return scheduling.Source{}, err
	}
	unlock := w.cache.Lock(repo.Owner, repo.Name)
	defer unlock()
	local, err := w.cache.Fetch(w.ctx, repo.Owner, repo.Name, w.token, spec.Branch)
	if err != nil {
		return scheduling.Source{}, err
	}
	head := gitcache.Head(local, spec.Branch)
	if head.IsZero() {
		return scheduling.Source{}, fmt.Errorf("%s has no branch %q", repo, spec.Branch)
	}
	dir, err := scheduling.SubPath(spec.Path)
	if err != nil {
		return scheduling.Source{}, err
	}
	// Only the registered folder is read, and no file above the limit enters memory.
	fsys, err := gitsource.TreeFS(local, head, gitsource.Under(dir), gitsource.MaxFileBytes(w.maxBytes))
	if err != nil {
		return scheduling.Source{}, err
	}
	return scheduling.Source{FS: fsys, Name: repo.String(), Prefix: WorkloadPrefix(repo, spec.Branch), Commit: head.String()}, nil
}

// WorkloadPrefix is how paths of a workload repository's branch appear in error positions.
func WorkloadPrefix(repo Repo, branch string) string {
	return repo.String() + "@" + branch + ":"
}
