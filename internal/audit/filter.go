package audit

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxLimit bounds the entries of one page of /api/v1/audit.
const MaxLimit = 1000

// Filter selects audit entries: of one control plane, and optionally of an environment, of
// some kinds, by an actor, about a commit (a prefix of its SHA), within a time range, after a
// sequence number; at most Limit of them.
type Filter struct {
	ControlPlane string
	Environment  string
	Kinds        []string
	Actor        string
	Commit       string
	Since, Until time.Time
	After        int64
	Limit        int
}

// ParseFilter reads a filter from query parameters: controlPlane (required), environment,
// kind (repeated or comma separated), actor, commit, since and until (RFC 3339), after, limit.
func ParseFilter(q url.Values) (Filter, error) {
	f := Filter{ControlPlane: q.Get("controlPlane"), Environment: q.Get("environment"), Actor: q.Get("actor"),
		Commit: strings.ToLower(q.Get("commit")), Limit: 100}
	if owner, name, ok := strings.Cut(f.ControlPlane, "/"); !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return f, fmt.Errorf("controlPlane: %q is not OWNER/REPO", f.ControlPlane)
	}
	for _, k := range q["kind"] {
		for _, one := range strings.Split(k, ",") {
			if one = strings.TrimSpace(one); one != "" {
				f.Kinds = append(f.Kinds, one)
			}
		}
	}
	var err error
	parseTime := func(name string, into *time.Time) {
		if v := q.Get(name); v != "" && err == nil {
			if *into, err = time.Parse(time.RFC3339, v); err != nil {
				err = fmt.Errorf("%s: %q is not an RFC 3339 time", name, v)
			}
		}
	}
	parseTime("since", &f.Since)
	parseTime("until", &f.Until)
	if v := q.Get("after"); v != "" && err == nil {
		if f.After, err = strconv.ParseInt(v, 10, 64); err != nil || f.After < 0 {
			err = fmt.Errorf("after: %q is not a sequence number", v)
		}
	}
	if v := q.Get("limit"); v != "" && err == nil {
		if f.Limit, err = strconv.Atoi(v); err != nil || f.Limit < 1 || f.Limit > MaxLimit {
			err = fmt.Errorf("limit: %q is not a number from 1 to %d", v, MaxLimit)
		}
	}
	return f, err
}

// Matches reports whether an entry passes the filter (After and Limit aside).
func (f Filter) Matches(e Entry) bool {
	switch {
	case e.ControlPlane != f.ControlPlane:
		return false
	case f.Environment != "" && e.Environment != f.Environment:
		return false
	case len(f.Kinds) > 0 && !slices.Contains(f.Kinds, e.Kind):
		return false
	case f.Actor != "" && !strings.EqualFold(e.Actor, f.Actor):
		return false
	case f.Commit != "" && !strings.HasPrefix(e.Commit, f.Commit) && !strings.HasPrefix(e.Previous, f.Commit):
		return false
	case !f.Since.IsZero() && e.At.Before(f.Since):
		return false
	case !f.Until.IsZero() && !e.At.Before(f.Until):
		return false
	}
	return true
}
