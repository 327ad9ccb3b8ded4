package reconcile

import (
	"context"
	"errors"
	"fmt"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

var _ envref.Reader = (*Reconciler)(nil)

// Repositories lists the repositories an installation can see; it implements envref.Reader.
func (r *Reconciler) Repositories(ctx context.Context, inst int64) ([]envref.Repo, error) {
	gh, err := r.clients.Client(ctx, inst)
	if err != nil {
		return nil, err
	}
	repos, err := gh.Repositories(ctx)
	if err != nil {
		return nil, fmt.Errorf("list repositories of installation %d: %w", inst, err)
	}
	return repos, nil
}

// Describe reads the environments a repository declares on main and what each one names; it
// implements envref.Reader.
func (r *Reconciler) Describe(ctx context.Context, inst int64, repo envref.Repo) ([]envref.EnvInfo, error) {
	token, err := r.clients.Token(ctx, inst)
	if err != nil {
		return nil, err
	}
	var out []envref.EnvInfo
	remote := gitcache.Remote{Owner: repo.Owner, Name: repo.Name, Token: token}
	err = r.cache.Use(ctx, remote, nil, func(s *gitcache.Session) error {
		envs, err := gitsource.MainEnvironments(s.Repo)
		if err != nil {
			return err
		}
		for _, e := range envs {
			info := envref.EnvInfo{Env: envref.Env{Installation: inst, ControlPlane: repo, Name: e.Name}, Branch: e.Spec.ControlPlane.Branch}
			if in, _, err := gitsource.Inputs(s.Repo, e.Name, refusing{}, gitsource.Limits(r.policy)); err == nil {
				in.Policy = r.policy
				fillTargets(&info, scheduling.Load(in))
			}
			out = append(out, info)
		}
		return nil
	})
	if errors.Is(err, gitcache.ErrEmpty) {
		return nil, nil
	}
	return out, err
}

// fillTargets records the GitOps repository and the workload branches of an environment.
func fillTargets(info *envref.EnvInfo, snap *scheduling.Snapshot) {
	if snap.GitOpsRepo != nil {
		if g, err := envref.RepoOf(snap.GitOpsRepo.Spec.Repo); err == nil {
			info.GitOps, info.GitOpsBranch = g, snap.GitOpsRepo.Spec.Branch
			info.GitOpsPath, _ = scheduling.SubPath(snap.GitOpsRepo.Spec.Path)
		}
	}
	for _, reg := range snap.Registrations {
		if w, err := envref.RepoOf(reg.Spec.Workload.Repo); err == nil {
			info.Workloads = append(info.Workloads, envref.RepoBranch{Repo: w, Branch: reg.Spec.Workload.Branch})
		}
	}
}

// refusing is a workload source that reads nothing: the index only needs the registrations.
type refusing struct{}

// Workload implements scheduling.WorkloadSource.
func (refusing) Workload(scheduling.ManifestsSpec) (scheduling.Source, error) {
	return scheduling.Source{}, errors.New("not read")
}
