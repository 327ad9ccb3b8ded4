package reconcile

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// NotRegisteredError is the refusal to read, for a preview, a workload repository that the
// pull request's base does not register yet: a pull request cannot make the app fetch, with its
// installation token, a repository its author may not be able to read.
type NotRegisteredError struct {
	Repo   envref.Repo
	Branch string
	Base   string // the pull request's base branch
}

// Error implements error.
func (e *NotRegisteredError) Error() string {
	return fmt.Sprintf("not previewed: %s branch %s is not registered on %s yet", e.Repo, e.Branch, e.Base)
}

// registeredOnly is the workload source of a preview's proposed side: it reads a workload
// repository's branch only when the base already registers it, and records every other one
// the pull request's registrations name, without fetching anything of it.
type registeredOnly struct {
	inner      scheduling.WorkloadSource
	registered map[envref.RepoBranch]bool
	base       string
	refused    *[]string // the refusals, as they appear at the end of an error's message
}

// Workload implements scheduling.WorkloadSource.
func (w *registeredOnly) Workload(spec scheduling.ManifestsSpec) (scheduling.Source, error) {
	repo, err := envref.RepoOf(spec.Repo)
	if err != nil {
		return scheduling.Source{}, err
	}
	if !w.registered[envref.RepoBranch{Repo: repo, Branch: spec.Branch}] {
		refusal := &NotRegisteredError{Repo: repo, Branch: spec.Branch, Base: w.base}
		*w.refused = append(*w.refused, refusal.Error())
		return scheduling.Source{}, refusal
	}
	return w.inner.Workload(spec)
}

// registeredOnMain returns the workload branches main's head registers for an environment:
// the base of a pull request into main. (The base of any other pull request is the environment
// as it is: its registrations.) Nothing is fetched to know it.
func registeredOnMain(s *gitcache.Session, env string, policy scheduling.Policy) (map[envref.RepoBranch]bool, error) {
	main, err := gitsource.Resolve(s.Repo, gitsource.MainBranch)
	if err != nil {
		return nil, err
	}
	in, _, err := gitsource.InputsAt(s.Repo, env, refusing{}, main, plumbing.ZeroHash, gitsource.Limits(policy))
	if err != nil {
		return nil, err
	}
	in.Policy = policy
	return registrations(scheduling.Load(in)), nil
}

// registrations are the workload branches a snapshot registers.
func registrations(snap *scheduling.Snapshot) map[envref.RepoBranch]bool {
	out := map[envref.RepoBranch]bool{}
	for _, reg := range snap.Registrations {
		if repo, err := envref.RepoOf(reg.Spec.Workload.Repo); err == nil {
			out[envref.RepoBranch{Repo: repo, Branch: reg.Spec.Workload.Branch}] = true
		}
	}
	return out
}

// withoutRefusals drops the errors that only say a registration was not previewed: they are
// listed apart, and are no error of the pull request.
func withoutRefusals(errs scheduling.Errors, refused []string) scheduling.Errors {
	if len(refused) == 0 {
		return errs
	}
	out := errs[:0:0]
	for _, e := range errs {
		if !anyOf(refused, func(r string) bool { return strings.HasSuffix(e.Msg, r) }) {
			out = append(out, e)
		}
	}
	return out
}

// anyOf reports whether f holds for any of xs.
func anyOf(xs []string, f func(string) bool) bool {
	for _, x := range xs {
		if f(x) {
			return true
		}
	}
	return false
}
