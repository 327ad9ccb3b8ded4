package scheduling

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"
)

// Names of the app settings that carry the limits on reading sources; errors name them.
const (
	SettingMaxFileBytes   = "sources.maxFileBytes"
	SettingMaxSourceBytes = "sources.maxSourceBytes"
	SettingMaxSourceFiles = "sources.maxSourceFiles"
	SettingLoadTimeout    = "sources.loadTimeout"
)

// Default limits on reading sources: far above what control planes and workload repositories
// hold (the 100,000-assignment benchmark fleet reads under 1 MiB per source), far below what
// would hurt the process.
const (
	DefaultMaxFileBytes   = 4 << 20  // one YAML file
	DefaultMaxSourceBytes = 16 << 20 // the YAML files read from one source together
	DefaultMaxSourceFiles = 10_000   // the YAML files read from one source
	DefaultLoadTimeout    = 30 * time.Second
)

// ErrFileTooLarge is returned for a YAML file larger than Policy.MaxFileBytes.
var ErrFileTooLarge = errors.New("file is larger than the limit")

// ErrSourceTooLarge is what every breach of a source's limits matches with errors.Is.
var ErrSourceTooLarge = errors.New("source is larger than the limit")

// SourceLimitError says that the YAML files of a source exceed one of its limits; nothing of
// the source is read.
type SourceLimitError struct {
	Setting string // the setting that carries the limit
	Limit   int64
	Files   int   // the YAML files the source would read, each path counted
	Bytes   int64 // their sizes together, each path counted
}

// Error names the measured size, the limit and its setting.
func (e *SourceLimitError) Error() string {
	what := fmt.Sprintf("%d bytes", e.Limit)
	if e.Setting == SettingMaxSourceFiles {
		what = fmt.Sprintf("%d files", e.Limit)
	}
	return fmt.Sprintf("the source's YAML files (%d files, %d bytes, a file at several paths counted at each) are over the limit of %s (setting %s): none of them is read",
		e.Files, e.Bytes, what, e.Setting)
}

// Is makes every SourceLimitError match ErrSourceTooLarge.
func (e *SourceLimitError) Is(target error) bool { return target == ErrSourceTooLarge }

// WithDefaults returns the policy with every unset (zero or negative) limit at its default.
func (p Policy) WithDefaults() Policy {
	if p.MaxFileBytes <= 0 {
		p.MaxFileBytes = DefaultMaxFileBytes
	}
	if p.MaxSourceBytes <= 0 {
		p.MaxSourceBytes = DefaultMaxSourceBytes
	}
	if p.MaxSourceFiles <= 0 {
		p.MaxSourceFiles = DefaultMaxSourceFiles
	}
	if p.LoadTimeout <= 0 {
		p.LoadTimeout = DefaultLoadTimeout
	}
	return p
}

// SourceFile is a YAML file that loading a source reads: its path in the source and its size.
type SourceFile struct {
	Path string
	Size int64
}

// Refuser is implemented by a file system that refused to read a source (see SelectFiles):
// Refused returns why, or nil.
type Refuser interface {
	Refused() error
}

// FileSelector is implemented by a file system that selects its files itself, as SelectFiles
// does (e.g. once for a tree that does not change).
type FileSelector interface {
	SelectFiles(dir string, pol Policy) ([]SourceFile, error)
}

// SelectFiles lists the files that loading reads below dir of fsys — every .yaml and .yml
// file, in path order, except those matched by the `.sourceignore` at the root of fsys, as
// Flux does — with their sizes, without reading them. It checks the limits of the policy
// (unset ones at their defaults) against all of them together, each path counted even when
// several name the same content (a file above MaxFileBytes is never read, and counts only as a
// file); a breach is a *SourceLimitError and nothing may be read. A file system that already
// refused the source (a Refuser) gives its own reason; a FileSelector selects its files itself.
func SelectFiles(fsys fs.FS, dir string, pol Policy) ([]SourceFile, error) {
	if s, ok := fsys.(FileSelector); ok {
		return s.SelectFiles(dir, pol)
	}
	return WalkFiles(fsys, dir, pol)
}

// IsSourceFile tells whether a file of a source is read for objects: a YAML file (.yaml, .yml).
func IsSourceFile(name string) bool {
	ext := path.Ext(name)
	return ext == ".yaml" || ext == ".yml"
}

// WalkFiles is SelectFiles walking the folders of fsys, for a FileSelector to use.
func WalkFiles(fsys fs.FS, dir string, pol Policy) ([]SourceFile, error) {
	if r, ok := fsys.(Refuser); ok {
		if err := r.Refused(); err != nil {
			return nil, err
		}
	}
	pol = pol.WithDefaults()
	ignore, err := sourceIgnore(fsys, pol.MaxFileBytes)
	if err != nil {
		return nil, err
	}
	root := dir
	if root == "" {
		root = "."
	}
	var files []SourceFile
	err = fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		parts := strings.Split(p, "/")
		if d.IsDir() {
			if p != root && (d.Name() == ".git" || ignore.Match(parts, true)) {
				return fs.SkipDir
			}
			return nil
		}
		if !IsSourceFile(p) || ignore.Match(parts, false) {
			return nil
		}
		info, err := fs.Stat(fsys, p) // a file left unread by its file system reports its real size
		if err != nil {
			return err
		}
		files = append(files, SourceFile{Path: p, Size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := CheckSourceLimits(files, pol); err != nil {
		return nil, err
	}
	return files, nil
}

// CheckSourceLimits checks the limits of the policy (unset ones at their defaults) against the
// files a source selects, as SelectFiles does: a breach is a *SourceLimitError, and then the
// files are not to be read.
func CheckSourceLimits(files []SourceFile, pol Policy) error {
	pol = pol.WithDefaults()
	var total int64
	for _, f := range files {
		if f.Size <= pol.MaxFileBytes { // a larger file is not read: it is an error of its own
			total += f.Size
		}
	}
	switch {
	case len(files) > pol.MaxSourceFiles:
		return &SourceLimitError{Setting: SettingMaxSourceFiles, Limit: int64(pol.MaxSourceFiles), Files: len(files), Bytes: total}
	case total > pol.MaxSourceBytes:
		return &SourceLimitError{Setting: SettingMaxSourceBytes, Limit: pol.MaxSourceBytes, Files: len(files), Bytes: total}
	}
	return nil
}

// CheckFileSize refuses a file larger than the policy's MaxFileBytes (its default when unset)
// with an error matching ErrFileTooLarge that names the limit and its setting.
func CheckFileSize(size int64, pol Policy) error {
	if max := pol.WithDefaults().MaxFileBytes; size > max {
		return tooLarge(size, max)
	}
	return nil
}

// tooLarge is the error of a file of size bytes, above max.
func tooLarge(size, max int64) error {
	return fmt.Errorf("%w: %d bytes, limit %d (setting %s)", ErrFileTooLarge, size, max, SettingMaxFileBytes)
}
