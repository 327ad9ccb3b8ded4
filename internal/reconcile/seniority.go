package reconcile

import (
	"math"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// seniority tells how long each registration has existed in the control plane's history: the
// time since its file has been on main (or on the environment branch) without interruption.
// Only called when two registrations deliver the same name, so its cost is rarely paid.
func (r *Reconciler) seniority(cp Repo, in scheduling.Inputs) func(*scheduling.WorkloadRegistration) int64 {
	return func(reg *scheduling.WorkloadRegistration) int64 {
		unlock := r.cache.Lock(cp.Owner, cp.Name)
		defer unlock()
		repo, err := r.cache.Open(cp.Owner, cp.Name)
		if err != nil {
			return math.MaxInt64
		}
		// Main's files are shown below its prefix; the environment branch's as branch:folder/file.
		for _, src := range []struct{ prefix, commit string }{{in.Main.Prefix, in.Main.Commit}, {in.Env.Name + ":", in.Env.Commit}} {
			if file, ok := strings.CutPrefix(reg.Pos.File, src.prefix); ok && src.commit != "" {
				return gitsource.FirstSeen(repo, plumbing.NewHash(src.commit), file)
			}
		}
		return math.MaxInt64
	}
}
