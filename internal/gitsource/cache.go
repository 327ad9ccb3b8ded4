package gitsource

import (
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Cache keeps what reading trees found, by content address, so that reading the same sources
// again costs what changed: a commit read before is not decoded again; a source whose tree (and .sourceignore) did not change is neither
// listed nor read (the FS read last time is returned, with what was selected from it); within a
// changed source only the subtrees whose hash changed are listed and only the blobs whose hash
// changed are read. The limits of a source are still decided on the whole source, from the
// sizes listed. The environments main declares are parsed once per content of its
// .environments folder.
//
// It holds what the reads since the last Sweep used and what the reads before it used, nothing
// else: the listings of the sources' trees and the content of the files read (within their
// limits: MaxSourceBytes per source), so its size follows the sources. One per environment
// (its sources are read a little changed at each push); safe for concurrent use. The zero
// value is not usable: see NewCache.
type Cache struct {
	mu      sync.Mutex
	sources gens[sourceKey, treeFS]
	trees   gens[plumbing.Hash, *listing]
	blobs   gens[plumbing.Hash, []byte]
	sizes   gens[plumbing.Hash, int64]
	pins    gens[plumbing.Hash, mainPin]
	roots   gens[rootKey, foundSource]
	decls   gens[declKey, *scheduling.Declarations]
	stats   CacheStats // of this round
	last    CacheStats // of the last round swept
}

// CacheStats counts what the reads since the last Sweep did.
type CacheStats struct {
	SourcesReused int // sources whose tree was unchanged: nothing listed or read
	SourcesRead   int // sources listed (only their changed subtrees) and read (only their changed blobs)
	TreesListed   int // tree objects decoded
	BlobsRead     int // blobs read from the repository
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{sources: newGens[sourceKey, treeFS](), trees: newGens[plumbing.Hash, *listing](),
		blobs: newGens[plumbing.Hash, []byte](), sizes: newGens[plumbing.Hash, int64](), pins: newGens[plumbing.Hash, mainPin](),
		roots: newGens[rootKey, foundSource](), decls: newGens[declKey, *scheduling.Declarations]()}
}

// WithCache makes TreeFS read through c (nil: no cache).
func WithCache(c *Cache) Option {
	return func(o *treeOptions) { o.cache = c }
}

// Sweep ends a round of reads (one load of an environment): what neither this round nor the
// previous one used is forgotten. It returns what the round did (nothing without a cache).
func (c *Cache) Sweep() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources.sweep()
	c.trees.sweep()
	c.blobs.sweep()
	c.sizes.sweep()
	c.pins.sweep()
	c.roots.sweep()
	c.decls.sweep()
	s := c.stats
	c.stats, c.last = CacheStats{}, s
	return s
}

// LastRound returns what the reads of the last round swept did.
func (c *Cache) LastRound() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// Stats returns what the reads since the last Sweep did.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// sourceKey identifies what TreeFS reads: the same key is the same FS.
type sourceKey struct {
	tree   plumbing.Hash // the folder read (zero: it does not exist)
	ignore plumbing.Hash // the .sourceignore that applies (zero: none)
	under  string
	root   string
	limits limits
}

// limits are the limits of a policy that decide what TreeFS reads.
type limits struct {
	file, bytes int64
	files       int
}

func limitsOf(p scheduling.Policy) limits {
	p = p.WithDefaults()
	return limits{file: p.MaxFileBytes, bytes: p.MaxSourceBytes, files: p.MaxSourceFiles}
}

// gens is a map kept over two rounds: a value used in this round or the previous one is kept.
type gens[K comparable, V any] struct {
	cur, prev map[K]V
}

func newGens[K comparable, V any]() gens[K, V] {
	return gens[K, V]{cur: map[K]V{}, prev: map[K]V{}}
}

// get returns the value of k, keeping it for the next round.
func (g *gens[K, V]) get(k K) (V, bool) {
	if v, ok := g.cur[k]; ok {
		return v, true
	}
	v, ok := g.prev[k]
	if ok {
		g.cur[k] = v
	}
	return v, ok
}

func (g *gens[K, V]) put(k K, v V) { g.cur[k] = v }

// sweep starts a round: the next one is made as large as this one was, as rounds read about
// the same sources.
func (g *gens[K, V]) sweep() { g.prev, g.cur = g.cur, make(map[K]V, len(g.cur)) }

// lookup returns the value of k in the part of c that pick chooses (a miss without a cache).
func lookup[K comparable, V any](c *Cache, pick func(*Cache) *gens[K, V], k K) (v V, ok bool) {
	if c == nil {
		return v, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return pick(c).get(k)
}

// store keeps v as the value of k in the part of c that pick chooses, counting it with count
// (nothing without a cache).
func store[K comparable, V any](c *Cache, pick func(*Cache) *gens[K, V], k K, v V, count func(*CacheStats)) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	pick(c).put(k, v)
	if count != nil {
		count(&c.stats)
	}
}

func (c *Cache) sourcesPart() *gens[sourceKey, treeFS]               { return &c.sources }
func (c *Cache) treesPart() *gens[plumbing.Hash, *listing]           { return &c.trees }
func (c *Cache) blobsPart() *gens[plumbing.Hash, []byte]             { return &c.blobs }
func (c *Cache) sizesPart() *gens[plumbing.Hash, int64]              { return &c.sizes }
func (c *Cache) pinsPart() *gens[plumbing.Hash, mainPin]             { return &c.pins }
func (c *Cache) rootsPart() *gens[rootKey, foundSource]              { return &c.roots }
func (c *Cache) declsPart() *gens[declKey, *scheduling.Declarations] { return &c.decls }
func countReused(s *CacheStats)                                      { s.SourcesReused++ }
func countRead(s *CacheStats)                                        { s.SourcesRead++ }
func countTree(s *CacheStats)                                        { s.TreesListed++ }
func countBlob(s *CacheStats)                                        { s.BlobsRead++ }

// note counts an event in c's stats (nothing without a cache).
func (c *Cache) note(count func(*CacheStats)) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	count(&c.stats)
}
