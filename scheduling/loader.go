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

func (l *loader) stop() { l.timer.Stop() }

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
		data, err := fs.ReadFile(src.FS, f.Path)
		if err != nil {
			l.errs.Add(Pos{File: display}, "", "%v", err)
			complete = false
			continue
		}
		if l.only != nil && !l.only(data) {
			continue
		}
		if !parseFileUntil(display, data, objs, l.errs, l.expired.Load) {
			l.errs.Add(Pos{File: display}, "", "%v; the rest of this file and the %d files after it are not read", l.timeoutError(), len(files)-i-1)
			return false
		}
	}
	return complete
}
