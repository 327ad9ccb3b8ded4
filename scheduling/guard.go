package scheduling

import (
	"reflect"
	"strconv"
	"strings"
)

// Quantity is a limit written as a whole number ("20") or a percentage ("10%").
type Quantity string

var quantityType = reflect.TypeOf(Quantity(""))

// Guard declares the blast radius an environment accepts from one change without an explicit
// acceptance: how many assignments may be added, changed or removed, and how many cluster
// types may be touched, each as a number or a percentage of the environment.
type Guard struct {
	// MaxAdded is the most assignments one change may add, a number or a percentage of the
	// environment's assignments before the change.
	MaxAdded Quantity `yaml:"maxAdded" default:"no limit" example:"200"`
	// MaxChanged is the most assignments whose files one change may change.
	MaxChanged Quantity `yaml:"maxChanged" default:"no limit" example:"50%"`
	// MaxRemoved is the most assignments one change may remove.
	MaxRemoved Quantity `yaml:"maxRemoved" default:"no limit" example:"10%"`
	// MaxClusterTypes is the most cluster types one change may touch, a number or a percentage
	// of the environment's cluster types.
	MaxClusterTypes Quantity `yaml:"maxClusterTypes" default:"no limit" example:"20"`
}

// Limit is one parsed guard limit.
type Limit struct {
	Value   int  // the number, or the percentage when Percent is set
	Percent bool // Value is a percentage of the environment
}

// Allows reports whether measured out of total stays within the limit. A percentage is
// compared exactly: measured*100 <= Value*total.
func (l Limit) Allows(measured, total int) bool {
	if l.Percent {
		return measured*100 <= l.Value*total
	}
	return measured <= l.Value
}

// String writes the limit as declared, e.g. "10%" or "20".
func (l Limit) String() string {
	if l.Percent {
		return strconv.Itoa(l.Value) + "%"
	}
	return strconv.Itoa(l.Value)
}

// Limits is an environment's guard, parsed; a nil limit is not checked.
type Limits struct {
	Added, Changed, Removed, ClusterTypes *Limit
}

// Empty reports whether no limit is set.
func (l *Limits) Empty() bool {
	return l == nil || (l.Added == nil && l.Changed == nil && l.Removed == nil && l.ClusterTypes == nil)
}

// ParseGuard validates an environment's spec.guard; errors are reported at the field's line.
// A broken limit fails closed: it becomes 0, so that no such change passes until it is fixed.
// It returns nil when the environment declares no guard.
func ParseGuard(e *Environment, errs *Errors) *Limits {
	g := e.Spec.Guard
	if g == nil {
		return nil
	}
	out := &Limits{}
	for _, f := range []struct {
		name string
		q    Quantity
		into **Limit
	}{
		{"maxAdded", g.MaxAdded, &out.Added},
		{"maxChanged", g.MaxChanged, &out.Changed},
		{"maxRemoved", g.MaxRemoved, &out.Removed},
		{"maxClusterTypes", g.MaxClusterTypes, &out.ClusterTypes},
	} {
		if f.q == "" {
			continue
		}
		l, ok := ParseQuantity(string(f.q))
		if !ok {
			errs.Add(e.At("spec.guard."+f.name), e.Ref(), "spec.guard.%s: %q is neither a whole number nor a percentage from 0%% to 100%%", f.name, f.q)
			l = Limit{}
		}
		*f.into = &l
	}
	return out
}

// ParseQuantity parses "20" or "10%": a non-negative whole number, a percentage at most 100.
func ParseQuantity(s string) (Limit, bool) {
	num, percent := strings.CutSuffix(s, "%")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || strings.HasPrefix(num, "+") || (percent && n > 100) {
		return Limit{}, false
	}
	return Limit{Value: n, Percent: percent}, true
}
