package scheduling

import (
	"bytes"
	"fmt"
	"io/fs"
	"sync/atomic"
	"time"
)

// loader reads sources within a policy's limits: which files a source holds is decided from
// their sizes before any is read, the files read are parsed on every core, their objects are
// added in the order of the files, and loading stops at the policy's time budget.
type loader struct {
	pol     Policy
	errs    *Errors
	expired atomic.Bool
	timer   *time.Timer
	// only, when set, tells which files are worth parsing (see mayHold); the others are skipped.
	only func(data []byte) bool
	// cache, when set, gives the files parsed by the previous load; parsed collects this
	// load's, which replace them when it ends (stop).
	cache   *ParseCache
	parsed  map[string]*parsedFile
	sources map[sourceKey][]*fileToParse // what gather found of the sources kept
	checks  map[*Workload]*targetChecks  // the checks of the workloads copied from the cache
	misses  int                          // files parsed, not found in the cache
	names   *nameIndex                   // the names the workloads produce, counted through the cache
}

// mayHold tells whether a file may hold an object of a kind: it names the kind, or has an
// escape sequence that could spell it. Looking for one kind, the other files need no parsing.
func mayHold(kind string) func([]byte) bool {
	return func(data []byte) bool {
		return bytes.Contains(data, []byte(kind)) || bytes.IndexByte(data, '\\') >= 0
	}
}

// newLoader starts the time budget of loading; stop ends it.
func newLoader(pol Policy, errs *Errors) *loader {
	l := &loader{pol: pol.WithDefaults(), errs: errs}
	l.timer = time.AfterFunc(l.pol.LoadTimeout, func() { l.expired.Store(true) })
	return l
}

func (l *loader) stop() {
	l.timer.Stop()
	if l.cache != nil {
		l.cache.keep(l.parsed, l.sources, l.misses, len(l.checks), l.names)
	}
}

// withCache makes the loader parse only the files that cache does not hold (nil: every file).
func (l *loader) withCache(cache *ParseCache) *loader {
	if cache != nil {
		files, sources, workloads := cache.sizes()
		l.cache, l.parsed, l.checks = cache, make(map[string]*parsedFile, files), make(map[*Workload]*targetChecks, workloads)
		l.sources = make(map[sourceKey][]*fileToParse, sources)
		l.names = cache.takeNames()
	}
	return l
}

// timeoutError is the error of loading that ran out of time.
func (l *loader) timeoutError() error {
	return fmt.Errorf("loading the environment's sources took longer than the limit of %s (setting %s)", l.pol.LoadTimeout, SettingLoadTimeout)
}

// source reads the YAML files below dir of src into objs. It returns false when the source was
// not read completely, so that objects may be missing: a breach of the source's limits (one
// error on the source, nothing read), a file too large or unreadable (an error at its path),
// or the end of the time budget.
func (l *loader) source(src Source, dir string, objs *objects) bool {
	rs := l.gather(src, dir)
	l.parseAll(rs)
	return l.addFiles(rs, objs)
}

// cacheKey returns the key of a file in the loader's cache, and whether it may be cached: the
// loader has a cache and the file system knows the file's content address.
func (l *loader) cacheKey(fsys fs.FS, display, name string) (string, bool) {
	h, ok := fsys.(FileHasher)
	if l.cache == nil || l.only != nil || !ok {
		return "", false
	}
	hash, ok := h.FileHash(name)
	if !ok {
		return "", false
	}
	return cacheKey(display, hash), true
}
