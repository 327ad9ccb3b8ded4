package reconcile

import (
	"slices"
	"sync"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
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
	// loads keeps, for each environment, what loading its sources found, so that the next
	// load reads and parses only what a push changed; forgotten with the environment's entry.
	loads map[envref.Env]*loadCaches
}

// resultEntry is an environment rendered from the sources it names, with the git form of
// what it generates.
type resultEntry struct {
	sources []scheduling.SourceCommit
	result  *render.Result
	index   *gitops.Index // describes result
}

func newResults() *results {
	return &results{entries: map[envref.Env]*resultEntry{}, loads: map[envref.Env]*loadCaches{}}
}

// loadCaches is what loading an environment's sources keeps for the next load.
type loadCaches struct {
	trees  *gitsource.Cache       // what reading the sources from git found
	parses *scheduling.ParseCache // the source files parsed
}

// loadCaches returns env's caches of what loading its sources found, made on first use.
func (c *results) loadCaches(env envref.Env) *loadCaches {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.loads[env]
	if l == nil {
		l = &loadCaches{trees: gitsource.NewCache(), parses: scheduling.NewParseCache()}
		c.loads[env] = l
	}
	return l
}

// render computes env's result for snap from the entry of env, when there is one, and keeps
// the new result as the entry, with its index brought up to date (hashing only the
// assignments rendered again, or every one after a full render).
func (c *results) render(env envref.Env, snap *scheduling.Snapshot) (*render.Result, render.Stats) {
	prev := c.entry(env)
	var from *render.Result
	var index *gitops.Index
	if prev != nil {
		from, index = prev.result, prev.index
	}
	res, stats := render.Incremental(from, snap, c.opts...)
	entry := &resultEntry{sources: slices.Clone(snap.Sources), result: res}
	if res.HasTarget {
		entry.index = index.Advance(res)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[env] = entry
	return res, stats
}

// index returns the index of res: the entry's when it describes res, else one brought up to
// date from it, or built from scratch.
func (c *results) index(env envref.Env, res *render.Result) *gitops.Index {
	var index *gitops.Index
	if e := c.entry(env); e != nil {
		index = e.index
	}
	return index.Advance(res)
}

// entry returns env's entry, nil on a cold start.
func (c *results) entry(env envref.Env) *resultEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[env]
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
	if e := c.entry(env); e != nil {
		return e.result
	}
	return nil
}

// drop forgets env's entry, parsed source files and what reading its sources found.
func (c *results) drop(env envref.Env) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, env)
	delete(c.loads, env)
}
