package reconcile

import (
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"slices"
	"sync"

	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// results keeps in memory, for each environment, the last result rendered and the source
// commits it came from, so that the next reconcile of that environment renders only what
// changed. It is a cache only: a restart, another replica or a dropped entry costs one full
// render, and the output is the same bytes either way. One entry per environment; an
// environment whose sources cannot be read loses its entry.
type results struct {
	mu      sync.Mutex
	entries map[envref.Env]*resultEntry
	opts    []render.Option // the rendering limits
}

// resultEntry is an environment rendered from the sources it names.
type resultEntry struct {
	sources []scheduling.SourceCommit
	result  *render.Result
}

func newResults() *results { return &results{entries: map[envref.Env]*resultEntry{}} }

// render computes env's result for snap from the entry of env, when there is one, and keeps
// the new result as the entry.
func (c *results) render(env envref.Env, snap *scheduling.Snapshot) (*render.Result, render.Stats) {
	res, stats := render.Incremental(c.previous(env), snap, c.opts...)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[env] = &resultEntry{sources: slices.Clone(snap.Sources), result: res}
	return res, stats
}

// peek computes env's result for snap from the entry of env without keeping it: snap is not
// what the environment pins (main at another commit).
func (c *results) peek(env envref.Env, snap *scheduling.Snapshot) *render.Result {
	res, _ := render.Incremental(c.previous(env), snap, c.opts...)
	return res
}

// previous returns the result to start from: the entry of env, nil on a cold start. Any
// earlier result of the environment will do, whatever commits it came from: the delta is
// computed from the content of both snapshots.
func (c *results) previous(env envref.Env) *render.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[env]; e != nil {
		return e.result
	}
	return nil
}

// drop forgets env's entry.
func (c *results) drop(env envref.Env) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, env)
}
