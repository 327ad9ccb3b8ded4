package reconcile

import (
	"context"
	"fmt"
	"github.com/kalypso-gitops/kalypso/internal/envref"

	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// cachedWorkloads reads registered workload repositories through the git cache.
type cachedWorkloads struct {
	ctx    context.Context
	cache  Git
	token  string
	policy scheduling.Policy // the limits of one source
	trees  *gitsource.Cache  // what earlier reads found (nil: read from scratch)
	// pull, when set, is a pull request into a branch of a workload repository: that branch is
	// read at the pull request's result, through the repository's own refs/pull/N/… refs, and
	// read records which ref was read.
	pull *PullRequest
	read *Preview
}

// Workload implements scheduling.WorkloadSource.
func (w *cachedWorkloads) Workload(spec scheduling.ManifestsSpec) (scheduling.Source, error) {
	repo, err := envref.RepoOf(spec.Repo)
	if err != nil {
		return scheduling.Source{}, err
	}
	dir, err := scheduling.SubPath(spec.Path)
	if err != nil {
		return scheduling.Source{}, err
	}
	var src scheduling.Source
	remote := gitcache.Remote{Owner: repo.Owner, Name: repo.Name, Token: w.token}
	err = w.cache.Use(w.ctx, remote, []string{spec.Branch}, func(s *gitcache.Session) error {
		head := s.Head(spec.Branch)
		if head.IsZero() {
			return fmt.Errorf("%s has no branch %q", repo, spec.Branch)
		}
		if p := w.pull; p != nil && p.Repo == repo && p.Base == spec.Branch {
			commit, which, err := s.FetchPull(p.Number)
			if err != nil {
				return err
			}
			head, w.read.Read, w.read.Commit = commit, which, commit.String()
		}
		// Only the registered folder is read, and only within the limits of one source.
		fsys, err := gitsource.TreeFS(s.Repo, head, gitsource.Under(dir), gitsource.Limits(w.policy), gitsource.WithCache(w.trees))
		if err != nil {
			return err
		}
		src = scheduling.Source{FS: fsys, Name: repo.String(), Prefix: WorkloadPrefix(repo, spec.Branch), Commit: head.String()}
		return nil
	})
	return src, err
}

// WorkloadPrefix is how paths of a workload repository's branch appear in error positions.
func WorkloadPrefix(repo envref.Repo, branch string) string {
	return repo.String() + "@" + branch + ":"
}
