package hub

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Target is an environment reports can be attributed to, as the app knows it.
type Target struct {
	Installation int64
	ControlPlane string // OWNER/REPO
	Environment  string
	GitOpsRepo   string // OWNER/REPO
	GitOpsBranch string
	GitOpsPath   string
	// ClusterTypes are the environment's cluster types, sorted; nil while this replica has
	// not rendered the environment yet.
	ClusterTypes []string
}

// Key names the target's environment: OWNER/REPO/ENV.
func (t Target) Key() string { return t.ControlPlane + "/" + t.Environment }

// HasClusterType reports whether name is one of the environment's cluster types.
func (t Target) HasClusterType(name string) bool {
	_, ok := slices.BinarySearch(t.ClusterTypes, name)
	return ok
}

// Targets lists every environment of every installation.
type Targets func(ctx context.Context) ([]Target, error)

// Directory finds environments by GitOps branch from a snapshot of Targets, read again after
// its refresh period, or sooner (at most every minRetry) when a branch is not found: so
// that reports naming unknown branches cannot make the app read GitHub at their rate.
type Directory struct {
	load     Targets
	refresh  time.Duration
	minRetry time.Duration
	now      func() time.Time

	snap    atomic.Pointer[dirSnapshot]
	loading sync.Mutex
	types   func(Target) []string // nil: Target.ClusterTypes
}

// UseClusterTypes makes the directory read an environment's cluster types from types at each
// lookup (what the app has rendered by then) instead of the snapshot's.
func (d *Directory) UseClusterTypes(types func(Target) []string) { d.types = types }

// withTypes returns t with its current cluster types.
func (d *Directory) withTypes(t Target) Target {
	if d.types != nil {
		t.ClusterTypes = d.types(t)
	}
	return t
}

type dirSnapshot struct {
	at       time.Time
	byBranch map[string][]Target
	all      []Target
}

// NewDirectory returns a directory over load.
func NewDirectory(load Targets, refresh, minRetry time.Duration, now func() time.Time) *Directory {
	return &Directory{load: load, refresh: refresh, minRetry: minRetry, now: now}
}

// All returns every known environment, loading them when none are known yet.
func (d *Directory) All(ctx context.Context) ([]Target, error) {
	s, err := d.current(ctx, false)
	if err != nil {
		return nil, err
	}
	return s.all, nil
}

// ByBranch returns the environments whose GitOps branch is branch.
func (d *Directory) ByBranch(ctx context.Context, branch string) ([]Target, error) {
	s, err := d.current(ctx, false)
	if err != nil {
		return nil, err
	}
	if _, ok := s.byBranch[branch]; !ok {
		if s, err = d.current(ctx, true); err != nil {
			return nil, err
		}
	}
	return s.byBranch[branch], nil
}

// Invalidate makes the next lookup read the targets again.
func (d *Directory) Invalidate() {
	if s := d.snap.Load(); s != nil {
		d.snap.Store(&dirSnapshot{byBranch: s.byBranch, all: s.all})
	}
}

// current returns the snapshot, reloading it when it is older than refresh, or than
// minRetry when missed is set. One caller reloads; the others keep the old snapshot.
func (d *Directory) current(ctx context.Context, missed bool) (*dirSnapshot, error) {
	s := d.snap.Load()
	stale := func(s *dirSnapshot) bool {
		age := d.now().Sub(s.at)
		return age >= d.refresh || (missed && age >= d.minRetry)
	}
	if s != nil && !stale(s) {
		return s, nil
	}
	if s != nil && !d.loading.TryLock() {
		return s, nil
	}
	if s == nil {
		d.loading.Lock()
	}
	defer d.loading.Unlock()
	if cur := d.snap.Load(); cur != nil && cur != s && !stale(cur) {
		return cur, nil
	}
	targets, err := d.load(ctx)
	if err != nil {
		if s != nil {
			return s, nil
		}
		return nil, fmt.Errorf("hub: list environments: %w", err)
	}
	next := &dirSnapshot{at: d.now(), byBranch: map[string][]Target{}, all: targets}
	for _, t := range targets {
		next.byBranch[t.GitOpsBranch] = append(next.byBranch[t.GitOpsBranch], t)
	}
	d.snap.Store(next)
	return next, nil
}

// Refusal is a report that cannot be attributed, with the reason and the HTTP status.
type Refusal struct {
	Status int
	Reason string
}

func (r *Refusal) Error() string { return r.Reason }

// attribute finds the one environment of a report: its GitOps branch, the control plane it
// named, the environment it named, and the key it was authenticated with must all match, and
// its cluster type must be one of the environment's.
func attribute(ctx context.Context, dir *Directory, keys Keys, auth Authenticated, e Event) (Target, error) {
	if e.Branch == "" {
		return Target{}, &Refusal{422, "the report names no GitOps branch (a Flux revision such as dev@sha1:<sha>, Argo CD targetRevision, or branch)"}
	}
	found, err := dir.ByBranch(ctx, e.Branch)
	if err != nil {
		return Target{}, &Refusal{503, "the environments cannot be read right now"}
	}
	var match []Target
	for _, t := range found {
		if (auth.ControlPlane == "" || strings.EqualFold(auth.ControlPlane, t.ControlPlane)) &&
			(e.Environment == "" || e.Environment == t.Environment) && auth.Matches(keys(t.ControlPlane)) {
			match = append(match, t)
		}
	}
	switch {
	case len(match) == 0:
		return Target{}, &Refusal{422, fmt.Sprintf("unknown environment: no environment with GitOps branch %q%s", e.Branch, scope(auth, e))}
	case len(match) > 1:
		var names []string
		for _, t := range match {
			names = append(names, t.Key())
		}
		return Target{}, &Refusal{422, fmt.Sprintf("GitOps branch %q belongs to %s: name the control plane in %s", e.Branch, strings.Join(names, ", "), HeaderControlPlane)}
	}
	t := dir.withTypes(match[0])
	switch {
	case t.ClusterTypes == nil:
		return Target{}, &Refusal{503, fmt.Sprintf("environment %s is not loaded yet; retry", t.Key())}
	case !t.HasClusterType(e.ClusterType):
		return Target{}, &Refusal{422, fmt.Sprintf("unknown cluster type %q: environment %s has %s", e.ClusterType, t.Key(), listSome(t.ClusterTypes, 10))}
	}
	return t, nil
}

// scope says which control plane and environment an attribution was limited to.
func scope(auth Authenticated, e Event) string {
	var parts []string
	if auth.ControlPlane != "" {
		parts = append(parts, "in control plane "+auth.ControlPlane)
	}
	if e.Environment != "" {
		parts = append(parts, "named "+e.Environment)
	}
	parts = append(parts, "reporting with this key")
	return " " + strings.Join(parts, ", ")
}

// listSome lists the first n names and counts the rest.
func listSome(names []string, n int) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
