// Package window decides whether a promotion may move now: allow and deny windows, each a cron
// schedule with a duration in a time zone, with the semantics of Argo CD's sync windows. A
// deny window that is active closes; otherwise, when allow windows exist, one of them must be
// active; without windows, promotions move at any time. Every verdict names the window that
// decided it, and a closed verdict says when promotions may move again.
package window

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Kind is whether a window allows or denies promotions while it is active.
type Kind string

// The kinds of windows.
const (
	Allow Kind = "allow"
	Deny  Kind = "deny"
)

// ErrInvalid marks a window that cannot be built from its settings.
var ErrInvalid = errors.New("invalid window")

// parser reads the five standard cron fields (minute, hour, day of month, month, day of
// week) and the descriptors @yearly, @monthly, @weekly, @daily and @hourly.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Window is an allow or deny window: it is active for Duration (elapsed time, whatever the
// wall clock does meanwhile) from each time its schedule fires in its time zone.
type Window struct {
	Name     string
	Kind     Kind
	Schedule string // the cron text, as written
	Duration time.Duration
	Location *time.Location
	spec     *cron.SpecSchedule
}

// New builds a window; tz is an IANA time zone name ("" is UTC). A schedule that names its
// own time zone (CRON_TZ=, TZ=) or repeats by an interval (@every) is refused: the time zone
// is a field of its own, and a window needs fixed start times.
func New(name string, kind Kind, schedule string, d time.Duration, tz string) (Window, error) {
	w := Window{Name: name, Kind: kind, Schedule: schedule, Duration: d}
	if kind != Allow && kind != Deny {
		return w, fmt.Errorf("%w: kind %q is neither allow nor deny", ErrInvalid, kind)
	}
	if d <= 0 {
		return w, fmt.Errorf("%w: duration %s is not positive", ErrInvalid, d)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil || strings.EqualFold(tz, "local") {
		return w, fmt.Errorf("%w: time zone %q is not an IANA time zone such as Europe/Paris", ErrInvalid, tz)
	}
	w.Location = loc
	if strings.Contains(schedule, "TZ=") || strings.HasPrefix(strings.TrimSpace(schedule), "@every") {
		return w, fmt.Errorf("%w: schedule %q: write the time zone in timeZone, and fixed times (no @every)", ErrInvalid, schedule)
	}
	s, err := parser.Parse(schedule)
	if err != nil {
		return w, fmt.Errorf("%w: schedule %q: %w", ErrInvalid, schedule, err)
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return w, fmt.Errorf("%w: schedule %q has no fixed times", ErrInvalid, schedule)
	}
	spec.Location = loc
	w.spec = spec
	return w, nil
}

// String names the window for verdicts: `deny window "weekend" (0 18 * * 5 for 63h, Europe/Paris)`.
func (w Window) String() string {
	return fmt.Sprintf("%s window %q (%s for %s, %s)", w.Kind, w.Name, w.Schedule, shortDuration(w.Duration), w.Location)
}

// maxStarts bounds how many starts of one window are walked to find the latest one before a
// time (a schedule firing every minute with a duration of a week walks about 10 000).
const maxStarts = 20000

// activeUntil reports whether the window is active at t and, if so, until when its latest
// start lasts (a later start may extend it; see Decide).
func (w Window) activeUntil(t time.Time) (bool, time.Time) {
	start := w.spec.Next(t.Add(-w.Duration))
	if start.IsZero() || start.After(t) {
		return false, time.Time{}
	}
	for range maxStarts {
		n := w.spec.Next(start)
		if n.IsZero() || n.After(t) {
			break
		}
		start = n
	}
	return true, start.Add(w.Duration)
}

// nextStart returns the first start of the window after t (zero if it never starts again).
func (w Window) nextStart(t time.Time) time.Time { return w.spec.Next(t) }

func shortDuration(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	if s == "" {
		return "0s"
	}
	return s
}
