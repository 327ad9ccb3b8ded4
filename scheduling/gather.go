package scheduling

import (
	"io/fs"
	"runtime"
	"sync"
	"sync/atomic"
)

// fileToParse is a file of a source, read and waiting for its parse, or found in the cache.
type fileToParse struct {
	display string
	data    []byte      // nil once parsed
	key     string      // its key in the cache
	cached  bool        // it may be kept in the cache under key
	hit     *parsedFile // found in the cache: nothing to parse
	parsed  parsedFile  // what parsing found
	whole   bool        // the parse read the whole file
	after   int         // files of the source listed after it
}

// readSource is a source listed and read: its files in order, and whether every file it lists
// was read (the errors of those too large or unreadable are added already); when the time
// budget stopped the reading, the first file not read and how many are listed after it.
type readSource struct {
	files     []*fileToParse
	complete  bool
	stoppedAt string
	after     int
	key       sourceKey // the source's key in the cache
	reusable  bool      // the source has a key, and what it holds may be kept under it
	reused    bool      // found in the cache whole, files and all
}

// gather lists the files below dir of src, decides from their sizes which to read, and reads
// them, as source does; their parse is left to parseAll and their objects to addFiles.
func (l *loader) gather(src Source, dir string) *readSource {
	key, reusable := l.sourceKeyOf(src, dir)
	if reusable {
		if rs, ok := l.gathered(key); ok {
			return rs
		}
	}
	files, err := SelectFiles(src.FS, dir, l.pol)
	if err != nil {
		l.errs.Add(Pos{File: src.Prefix + dir}, "", "%v", err)
		return &readSource{}
	}
	rs := &readSource{complete: true, key: key, reusable: reusable}
	for i, f := range files {
		display := src.Prefix + f.Path
		if l.expired.Load() {
			rs.stoppedAt, rs.after, rs.complete = display, len(files)-i-1, false
			return rs
		}
		if f.Size > l.pol.MaxFileBytes {
			l.errs.Add(Pos{File: display}, "", "%v", tooLarge(f.Size, l.pol.MaxFileBytes))
			rs.complete = false
			continue
		}
		key, cached := l.cacheKey(src.FS, display, f.Path)
		if p := l.cache.get(key); cached && p != nil {
			rs.files = append(rs.files, &fileToParse{display: display, key: key, hit: p})
			continue
		}
		data, err := fs.ReadFile(src.FS, f.Path)
		if err != nil {
			l.errs.Add(Pos{File: display}, "", "%v", err)
			rs.complete = false
			continue
		}
		if l.only != nil && !l.only(data) {
			continue
		}
		rs.files = append(rs.files, &fileToParse{display: display, data: data, key: key, cached: cached, after: len(files) - i - 1})
	}
	return rs
}

// parseAll parses the files the sources read and the cache did not hold, on as many cores as
// the process may use; each file's parse is its own, so the order they run in changes nothing.
func (l *loader) parseAll(sources ...*readSource) {
	var todo []*fileToParse
	for _, rs := range sources {
		for _, f := range rs.files {
			if f.hit == nil {
				todo = append(todo, f)
			}
		}
	}
	parse := func(f *fileToParse) {
		f.whole = parseFileUntil(f.display, f.data, &f.parsed.objs, &f.parsed.errs, l.expired.Load)
		f.data = nil
	}
	workers := min(runtime.GOMAXPROCS(0), len(todo))
	if workers <= 1 {
		for _, f := range todo {
			parse(f)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(todo)); i = next.Add(1) - 1 {
				parse(todo[i])
			}
		})
	}
	wg.Wait()
}

// addFiles adds the objects and errors of a source's files to objs in the order of the files,
// through the cache; it reports whether the source was read completely.
func (l *loader) addFiles(rs *readSource, objs *objects) bool {
	for _, f := range rs.files {
		if f.hit != nil {
			l.parsed[f.key] = f.hit
			f.hit.addTo(objs, l.errs, l.checks)
			continue
		}
		if !l.addParsed(f, objs) {
			l.errs.Add(Pos{File: f.display}, "", "%v; the rest of this file and the %d files after it are not read", l.timeoutError(), f.after)
			return false
		}
	}
	if rs.stoppedAt != "" {
		l.errs.Add(Pos{File: rs.stoppedAt}, "", "%v; this file and the %d after it are not read", l.timeoutError(), rs.after)
	}
	l.keepGathered(rs)
	return rs.complete
}

// addParsed adds what parsing a file found to objs, keeping it in the cache when it may be; it
// reports whether the parse read the whole file before the time budget ran out (a file not
// read whole is not kept).
func (l *loader) addParsed(f *fileToParse, objs *objects) bool {
	p := &f.parsed
	if !f.cached {
		objs.merge(&p.objs)
		*l.errs = append(*l.errs, p.errs...)
		return f.whole
	}
	l.misses++
	if !f.whole {
		p.addTo(objs, l.errs, l.checks) // not kept: checked as any other
		return false
	}
	l.parsed[f.key] = p
	p.checks = make([]*targetChecks, len(p.objs.workloads))
	for i := range p.checks {
		p.checks[i] = &targetChecks{}
	}
	p.addTo(objs, l.errs, l.checks)
	return true
}
