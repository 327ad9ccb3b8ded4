package reconcile

import (
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// seniority tells how long each registration has existed in the control plane's history (see
// gitsource.RegistrationAge), read from the cached control plane.
// Only called when two registrations deliver the same name, so its cost is rarely paid.
func (r *Reconciler) seniority(cp envref.Repo, in scheduling.Inputs) func(*scheduling.WorkloadRegistration) int64 {
	return func(reg *scheduling.WorkloadRegistration) int64 {
		var age int64
		_ = r.cache.UseCached(gitcache.Remote{Owner: cp.Owner, Name: cp.Name}, func(s *gitcache.Session) error {
			age = gitsource.RegistrationAge(s.Repo, in, reg)
			return nil
		})
		return age
	}
}
