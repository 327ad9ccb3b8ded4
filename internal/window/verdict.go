package window

import (
	"fmt"
	"time"
)

// Verdict is what the windows say at one time: whether promotions may move, the window that
// decided it (nil: no window applies) and, when closed, when they may move again.
type Verdict struct {
	Open bool
	By   *Window
	// Until is, when closed, the first time the windows open again (zero: not within Horizon);
	// when open by an allow window, when that window's latest start ends.
	Until time.Time
}

// Horizon is how far ahead Decide looks for the time the windows open again.
const Horizon = 366 * 24 * time.Hour

// maxSteps bounds the times Decide looks at while it searches for the opening.
const maxSteps = 10000

// Decide judges the windows at now: an active deny window closes (the first in order decides);
// otherwise, when allow windows exist, an active one opens (the first in order decides) and
// none active closes; without windows promotions move.
func Decide(ws []Window, now time.Time) Verdict {
	v := judge(ws, now)
	if v.Open {
		return v
	}
	v.Until = opening(ws, now)
	return v
}

// judge decides at t without looking for the opening.
func judge(ws []Window, t time.Time) Verdict {
	var firstAllow *Window
	for i := range ws {
		w := &ws[i]
		if w.Kind == Deny {
			if on, _ := w.activeUntil(t); on {
				return Verdict{By: w}
			}
		}
	}
	for i := range ws {
		w := &ws[i]
		if w.Kind != Allow {
			continue
		}
		if on, until := w.activeUntil(t); on {
			return Verdict{Open: true, By: w, Until: until}
		}
		if firstAllow == nil || w.nextStart(t).Before(firstAllow.nextStart(t)) {
			firstAllow = w
		}
	}
	if firstAllow != nil {
		return Verdict{By: firstAllow}
	}
	return Verdict{Open: true}
}

// opening returns the first time after now at which judge opens, zero if none within Horizon.
// It steps from one change to the next: the end of an active deny window, the next start of
// an allow window.
func opening(ws []Window, now time.Time) time.Time {
	t := now
	for range maxSteps {
		next := nextChange(ws, t)
		if next.IsZero() || next.Sub(now) > Horizon {
			return time.Time{}
		}
		if judge(ws, next).Open {
			return next
		}
		t = next
	}
	return time.Time{}
}

// nextChange is the earliest time after t at which a closed verdict may open: an active deny
// window's latest start ends, or an allow window starts.
func nextChange(ws []Window, t time.Time) time.Time {
	var next time.Time
	earliest := func(c time.Time) {
		if !c.IsZero() && c.After(t) && (next.IsZero() || c.Before(next)) {
			next = c
		}
	}
	for _, w := range ws {
		if w.Kind == Deny {
			if on, until := w.activeUntil(t); on {
				earliest(until)
			}
			continue
		}
		earliest(w.nextStart(t))
	}
	return next
}

// String says the verdict in a line, naming the window that decided it.
func (v Verdict) String() string {
	switch {
	case v.By == nil:
		return "no promotion window applies"
	case v.Open:
		return fmt.Sprintf("open: %s is active", v.By)
	case v.By.Kind == Deny:
		return fmt.Sprintf("closed by %s%s", v.By, v.opens())
	}
	return fmt.Sprintf("closed: no allow window is active, next %s%s", v.By, v.opens())
}

// Short says the verdict in at most a commit status's 140 characters.
func (v Verdict) Short() string {
	switch {
	case v.By == nil:
		return "no promotion window applies"
	case v.Open:
		return fmt.Sprintf("open: %s window %q", v.By.Kind, v.By.Name)
	case v.By.Kind == Deny:
		return fmt.Sprintf("closed by deny window %q%s", v.By.Name, v.opens())
	}
	return fmt.Sprintf("closed: outside allow window %q%s", v.By.Name, v.opens())
}

// Opens says when the windows open, in the time zone of the window that decided:
// "opens 2026-03-30 09:00 CEST", or that they do not within Horizon.
func (v Verdict) Opens() string {
	if v.Open {
		return "open now"
	}
	if v.Until.IsZero() {
		return "does not open within a year"
	}
	return "opens " + v.Until.In(v.By.Location).Format("2006-01-02 15:04 MST")
}

func (v Verdict) opens() string { return "; " + v.Opens() }
