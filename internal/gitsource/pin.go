package gitsource

import "github.com/kalypso-gitops/kalypso/scheduling"

// pinnedCommit is scheduling.PinnedCommit of a source, found once per tree; through a cache,
// each file is looked at once per blob (nil: scheduling.PinnedCommit reads the source).
func pinnedCommit(src scheduling.Source, c *Cache) string {
	t, ok := src.FS.(treeFS)
	if !ok || t.memo == nil || c == nil {
		return scheduling.PinnedCommit(src)
	}
	t.memo.mu.Lock()
	pin := t.memo.pin
	t.memo.mu.Unlock()
	if pin != nil {
		return *pin
	}
	commit := t.findPin(c)
	t.memo.mu.Lock()
	defer t.memo.mu.Unlock()
	t.memo.pin = &commit
	return commit
}

// mainPin is what a file says of BaseRepo "main" (see scheduling.MainPin).
type mainPin struct {
	commit string
	ok     bool
}

// findPin is scheduling.PinnedCommit of t, looking at each blob's content once per cache:
// the first file in load order that declares BaseRepo "main" gives its commit.
func (t treeFS) findPin(c *Cache) string {
	files, err := t.SelectFiles("", scheduling.Policy{})
	if err != nil {
		return ""
	}
	for _, f := range files {
		h, read := t.hashes[f.Path]
		if f.Size > scheduling.DefaultMaxFileBytes || !read {
			continue // not read: an error of its own
		}
		p, ok := lookup(c, (*Cache).pinsPart, h)
		if !ok {
			p.commit, p.ok = scheduling.MainPin(f.Path, t.MapFS[f.Path].Data)
			store(c, (*Cache).pinsPart, h, p, nil)
		}
		if p.ok {
			return p.commit
		}
	}
	return ""
}
