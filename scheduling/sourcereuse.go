package scheduling

// SourceIdentifier is implemented by a file system that never changes once made and that one
// comparable value (a pointer) identifies among all file systems (a git tree read once and
// kept by a cache). Loading with a ParseCache finds the files it selected of such a source
// last time, with their parses, without selecting, reading or addressing them again.
type SourceIdentifier interface {
	// SourceID returns the value that identifies the file system (nil: none).
	SourceID() any
}

// sourceKey identifies what gather finds of a source: the file system, the folder read, how
// its files are shown, and the limits that decide which files are read.
type sourceKey struct {
	id          any
	prefix, dir string
	file, bytes int64
	files       int
}

// sourceKeyOf returns the key of what gather finds below dir of src, and whether it may be
// found again: the loader has a cache, the source an identity, and the time budget is not spent
// (a source is then read file by file, as far as the budget goes).
func (l *loader) sourceKeyOf(src Source, dir string) (sourceKey, bool) {
	s, ok := src.FS.(SourceIdentifier)
	if l.cache == nil || l.only != nil || !ok || l.expired.Load() {
		return sourceKey{}, false
	}
	id := s.SourceID()
	if id == nil {
		return sourceKey{}, false
	}
	return sourceKey{id: id, prefix: src.Prefix, dir: dir, file: l.pol.MaxFileBytes,
		bytes: l.pol.MaxSourceBytes, files: l.pol.MaxSourceFiles}, true
}

// gathered returns what gather found of the source of key last time, all from the cache, if
// it was kept; the next load may find it again.
func (l *loader) gathered(key sourceKey) (*readSource, bool) {
	files, ok := l.cache.source(key)
	if !ok {
		return nil, false
	}
	l.sources[key] = files
	return &readSource{files: files, complete: true, reused: true}, true
}

// keepGathered keeps what gather found of a source, once its files are added, for the next
// load: only a source read whole, whose files are all kept in the cache.
func (l *loader) keepGathered(rs *readSource) {
	if !rs.reusable || rs.reused || !rs.complete { // a source the time budget stopped is not complete
		return
	}
	files := make([]*fileToParse, len(rs.files))
	for i, f := range rs.files {
		p := f.hit
		if p == nil {
			if !f.cached || !f.whole {
				return
			}
			p = &f.parsed
		}
		files[i] = &fileToParse{display: f.display, key: f.key, hit: p}
	}
	l.sources[rs.key] = files
}

// source returns the files a load found of the source of key, if the last load kept them.
func (c *ParseCache) source(key sourceKey) ([]*fileToParse, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	files, ok := c.sources[key]
	return files, ok
}
