package scheduling

import (
	"bytes"
	"fmt"
	"io/fs"
	"sync/atomic"
	"time"
)

// loader reads sources within a policy's limits: which files a source holds is decided from
// their sizes before any is read, files are read and parsed one at a time, and loading stops
// at the policy's time budget.
type loader struct {
	pol     Policy
	errs    *Errors
	expired atomic.Bool
	timer   *time.Timer
	// only, when set, tells which files are worth parsing (see mayHold); the others are skipped.
	only func(data []byte) bool
	// cache, when set, gives the files parsed by the previous load; parsed collects this
	// load's, which replace them when it ends (stop).
	cache  *ParseCache
	parsed map[string]*parsedFile
	checks map[*Workload]*targetChecks // the checks of the workloads copied from the cache
	misses int                         // files parsed, not found in the cache
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
		l.cache.keep(l.parsed, l.misses)
	}
}

// withCache makes the loader parse only the files that cache does not hold (nil: every file).
func (l *loader) withCache(cache *ParseCache) *loader {
	if cache != nil {
		l.cache, l.parsed, l.checks = cache, map[string]*parsedFile{}, map[*Workload]*targetChecks{}
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
	files, err := SelectFiles(src.FS, dir, l.pol)
	if err != nil {
		l.errs.Add(Pos{File: src.Prefix + dir}, "", "%v", err)
		return false
	}
	complete := true
	for i, f := range files {
		display := src.Prefix + f.Path
		if l.expired.Load() {
			l.errs.Add(Pos{File: display}, "", "%v; this file and the %d after it are not read", l.timeoutError(), len(files)-i-1)
			return false
		}
		if f.Size > l.pol.MaxFileBytes {
			l.errs.Add(Pos{File: display}, "", "%v", tooLarge(f.Size, l.pol.MaxFileBytes))
			complete = false
			continue
		}
		key, cached := l.cacheKey(src.FS, display, f.Path)
		if p := l.cache.get(key); cached && p != nil {
			l.parsed[key] = p
			p.addTo(objs, l.errs, l.checks)
			continue
		}
		data, err := fs.ReadFile(src.FS, f.Path)
		if err != nil {
			l.errs.Add(Pos{File: display}, "", "%v", err)
			complete = false
			continue
		}
		if l.only != nil && !l.only(data) {
			continue
		}
		if !l.parse(display, data, objs, key, cached) {
			l.errs.Add(Pos{File: display}, "", "%v; the rest of this file and the %d files after it are not read", l.timeoutError(), len(files)-i-1)
			return false
		}
	}
	return complete
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

// parse parses a file into objs, through the cache under key when cached; it reports whether
// it read the whole file before the time budget ran out (a file not read whole is not kept).
func (l *loader) parse(display string, data []byte, objs *objects, key string, cached bool) bool {
	if !cached {
		return parseFileUntil(display, data, objs, l.errs, l.expired.Load)
	}
	l.misses++
	p := &parsedFile{}
	if !parseFileUntil(display, data, &p.objs, &p.errs, l.expired.Load) {
		p.checks = nil // not kept: checked as any other
		p.addTo(objs, l.errs, l.checks)
		return false
	}
	l.parsed[key] = p
	p.checks = make([]*targetChecks, len(p.objs.workloads))
	for i := range p.checks {
		p.checks[i] = &targetChecks{}
	}
	p.addTo(objs, l.errs, l.checks)
	return true
}
