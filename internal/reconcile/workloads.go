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
	ctx   context.Context
	cache *gitcache.Cache
	token string
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
	fsys, err := gitsource.TreeFS(local, head)
	if err != nil {
		return scheduling.Source{}, err
	}
	return scheduling.Source{FS: fsys, Name: repo.String(), Prefix: WorkloadPrefix(repo, spec.Branch), Commit: head.String()}, nil
}

// WorkloadPrefix is how paths of a workload repository's branch appear in error positions.
func WorkloadPrefix(repo Repo, branch string) string {
	return repo.String() + "@" + branch + ":"
}
