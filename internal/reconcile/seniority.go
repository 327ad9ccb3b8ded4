package reconcile

import (
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// seniority tells how long each registration has existed in the control plane's history: minus
// the number of commits its file has been on main (or on the environment branch) without
// interruption, so that older registrations sort first.
// Only called when two registrations deliver the same name, so its cost is rarely paid.
func (r *Reconciler) seniority(cp envref.Repo, in scheduling.Inputs) func(*scheduling.WorkloadRegistration) int64 {
	return func(reg *scheduling.WorkloadRegistration) int64 {
		var age int64
		_ = r.cache.UseCached(gitcache.Remote{Owner: cp.Owner, Name: cp.Name}, func(s *gitcache.Session) error {
			// Main's files are shown below its prefix; the environment branch's as branch:folder/file.
			for _, src := range []struct{ prefix, commit string }{{in.Main.Prefix, in.Main.Commit}, {in.Env.Name + ":", in.Env.Commit}} {
				if file, ok := strings.CutPrefix(reg.Pos.File, src.prefix); ok && src.commit != "" {
					age = -int64(gitsource.Age(s.Repo, plumbing.NewHash(src.commit), file))
					return nil
				}
			}
			return nil
		})
		return age
	}
}
