package scheduling

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kalypso-gitops/kalypso/internal/window"
)

// dedupeFreezes drops Freezes defined twice, reporting the later definitions.
func dedupeFreezes(list []*Freeze, errs *Errors) []*Freeze { return dedupe(list, errs) }

// applyFreezes validates the Freezes and attaches each to the environments its selector
// matches; an invalid Freeze is reported at its line and applies to none.
func applyFreezes(freezes []*Freeze, envs []*Environment, errs *Errors) {
	for _, f := range freezes {
		if _, ok := freezeWindow(f, errs); !ok {
			continue
		}
		sel := labels.Everything()
		if f.Spec.Environments != nil {
			s, err := selectorOf(*f.Spec.Environments)
			if err != nil {
				errs.Add(f.At("spec.environments"), f.Ref(), "spec.environments: %v", err)
				continue
			}
			sel = s
		}
		for _, e := range envs {
			if sel.Matches(labels.Set(e.Labels)) {
				e.freezes = append(e.freezes, f)
			}
		}
	}
}

// freezeWindow builds the deny window of a Freeze, reporting its errors at their lines.
func freezeWindow(f *Freeze, errs *Errors) (window.Window, bool) {
	s := f.Spec
	return buildWindow(&f.Object, "spec", "freeze "+f.Name, string(window.Deny), s.Schedule, s.Duration, s.TimeZone, errs)
}

// parseWindows builds an environment's promotion windows, then the deny windows of the
// Freezes that select it.
func parseWindows(e *Environment, errs *Errors) ([]window.Window, bool) {
	var out []window.Window
	ok := true
	for i, pw := range e.Spec.Promotion.Windows {
		name := pw.Name
		if name == "" {
			name = fmt.Sprintf("%s-%d", pw.Kind, i)
		}
		w, good := buildWindow(&e.Object, fmt.Sprintf("spec.promotion.windows[%d]", i), name, pw.Kind, pw.Schedule, pw.Duration, pw.TimeZone, errs)
		ok = ok && good
		out = append(out, w)
	}
	for _, f := range e.freezes {
		if w, good := freezeWindow(f, &Errors{}); good { // reported once, by applyFreezes
			out = append(out, w)
		}
	}
	return out, ok
}

// buildWindow builds one window from its fields, reporting each bad field at its line.
func buildWindow(o *Object, path, name, kind, schedule, duration, tz string, errs *Errors) (window.Window, bool) {
	if kind != string(window.Allow) && kind != string(window.Deny) {
		errs.Add(o.At(path+".kind"), o.Ref(), "%s.kind: %q is neither allow nor deny", path, kind)
		return window.Window{}, false
	}
	d, err := time.ParseDuration(duration)
	if err != nil || d <= 0 {
		errs.Add(o.At(path+".duration"), o.Ref(), "%s.duration: %q is not a positive duration such as 30m, 8h or 336h", path, duration)
		return window.Window{}, false
	}
	w, err := window.New(name, window.Kind(kind), schedule, d, tz)
	if err != nil {
		field := ".schedule"
		if _, zerr := time.LoadLocation(tz); zerr != nil || tz == "Local" {
			field = ".timeZone"
		}
		errs.Add(o.At(path+field), o.Ref(), "%s%s: %v", path, field, err)
		return window.Window{}, false
	}
	return w, true
}
