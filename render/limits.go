package render

import (
	"errors"
	"fmt"
	"time"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Names of the app settings that carry each limit; errors name them so that an operator knows
// what to raise.
const (
	SettingMaxAssignmentBytes = "render.maxAssignmentBytes"
	SettingMaxFunctionBytes   = "render.maxFunctionBytes"
	SettingMaxListLength      = "render.maxListLength"
	SettingTimeout            = "render.timeout"
)

// Default limits: far above what real templates need (a few KiB per assignment), far below
// what would hurt the process.
const (
	DefaultMaxAssignmentBytes = 4 << 20
	DefaultMaxFunctionBytes   = 16 << 20
	DefaultMaxListLength      = 10_000
	DefaultTimeout            = 60 * time.Second
)

// Limits bound what platform templates may cost. Templates are trusted, but a mistake (or a
// hostile control-plane commit) must end as an error on the assignments it affects, never as
// a crash, a hang or a held lock.
type Limits struct {
	// MaxAssignmentBytes bounds the files of one assignment together, counted as they are
	// written, in every nested rendering pass.
	MaxAssignmentBytes int
	// MaxFunctionBytes bounds the bytes that template functions produce while one assignment
	// renders (strings, and the size of the lists and maps they build), counted before the
	// functions whose output size an argument chooses (repeat, indent, join, …) allocate.
	MaxFunctionBytes int
	// MaxListLength bounds the elements of a list or map a function returns (until, untilStep,
	// seq, splitList, list, append, …).
	MaxListLength int
	// Timeout bounds the rendering of one environment; assignments not rendered by then fail.
	Timeout time.Duration
}

// DefaultLimits returns the limits used when none are given.
func DefaultLimits() Limits {
	return Limits{
		MaxAssignmentBytes: DefaultMaxAssignmentBytes,
		MaxFunctionBytes:   DefaultMaxFunctionBytes,
		MaxListLength:      DefaultMaxListLength,
		Timeout:            DefaultTimeout,
	}
}

// withDefaults replaces unset (zero or negative) limits by their defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxAssignmentBytes <= 0 {
		l.MaxAssignmentBytes = d.MaxAssignmentBytes
	}
	if l.MaxFunctionBytes <= 0 {
		l.MaxFunctionBytes = d.MaxFunctionBytes
	}
	if l.MaxListLength <= 0 {
		l.MaxListLength = d.MaxListLength
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	return l
}

// Option configures an Engine, Environment or Incremental.
type Option func(*options)

type options struct {
	limits       Limits
	textTemplate bool                                           // run every manifest with text/template, none compiled
	previous     map[string]*compiledTemplate                   // templates an earlier engine compiled, by name
	earlier      Outputs                                        // outputs of an earlier result, the first skeletons tried
	known        map[*scheduling.DeploymentTarget]*targetValues // escaped target values of an earlier result
	configValues map[string]any                                 // parsed config values of an earlier result
	composed     *configMemory                                  // parsed and composed config of an earlier result
}

// withTemplatesOf lets an engine take the parsed manifests of r's engine whose text has not
// changed (see Engine.compile).
func withTemplatesOf(r *Result) Option {
	return func(o *options) { o.previous = r.templates }
}

// withWorkOf lets an engine share what r's engine made: the files of r's outputs (an
// assignment rendered again tries the skeletons of its output in r before any other, see
// cutter.files), the escaped values of the deployment targets it rendered, the parsed
// config values and the composed configs (see newConfigIndex).
func withWorkOf(r *Result) Option {
	return func(o *options) {
		o.earlier, o.known, o.configValues, o.composed = r.Outputs, r.targets, r.configValues, r.composed
	}
}

// WithTextTemplateOnly runs every manifest with text/template, even those simple enough to be
// compiled (see compiledManifest): the output is the same, only slower. Tests compare both.
func WithTextTemplateOnly() Option {
	return func(o *options) { o.textTemplate = true }
}

// WithLimits sets the rendering limits; unset fields keep their defaults.
func WithLimits(l Limits) Option {
	return func(o *options) { o.limits = l.withDefaults() }
}

func newOptions(opts []Option) options {
	o := options{limits: DefaultLimits()}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// ErrLimit is what every LimitError matches with errors.Is.
var ErrLimit = errors.New("rendering limit exceeded")

// LimitError reports a template that went beyond a rendering limit.
type LimitError struct {
	Setting string // the setting that carries the limit, e.g. render.maxListLength
	Limit   string // the limit's value, as configured
	What    string // what went beyond it
}

// Error names what went beyond which limit, and the setting to change.
func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: over the limit of %s (setting %s)", e.What, e.Limit, e.Setting)
}

// Is makes every LimitError match ErrLimit.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

func listLimitError(what string, l Limits) *LimitError {
	return &LimitError{Setting: SettingMaxListLength, Limit: fmt.Sprintf("%d elements", l.MaxListLength), What: what}
}

func functionBytesError(what string, l Limits) *LimitError {
	return &LimitError{Setting: SettingMaxFunctionBytes, Limit: fmt.Sprintf("%d bytes made by template functions per assignment", l.MaxFunctionBytes), What: what}
}

func outputBytesError(l Limits) *LimitError {
	return &LimitError{Setting: SettingMaxAssignmentBytes, Limit: fmt.Sprintf("%d bytes per assignment", l.MaxAssignmentBytes), What: "the assignment's output"}
}

func timeoutError(l Limits) *LimitError {
	return &LimitError{Setting: SettingTimeout, Limit: l.Timeout.String(), What: "the environment's rendering time"}
}
