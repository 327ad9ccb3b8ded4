package reconcile

import (
	"slices"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// LastResult returns the last result this replica rendered for env and the source commits it
// came from, or false when it has none (not reconciled yet here, or its sources could not be
// read). The result is shared: callers must only read it.
func (r *Reconciler) LastResult(env envref.Env) (*render.Result, []scheduling.SourceCommit, bool) {
	r.results.mu.Lock()
	defer r.results.mu.Unlock()
	e := r.results.entries[env]
	if e == nil {
		return nil, nil, false
	}
	return e.result, slices.Clone(e.sources), true
}
