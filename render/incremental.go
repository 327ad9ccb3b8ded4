package render

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"weak"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Stats says how much of an environment Incremental computed again.
type Stats struct {
	Full                bool   // the whole environment was rendered, as Environment does
	Reason              string // why the whole environment was rendered
	Changes             int    // objects that differ from the previous snapshot
	AssignmentsRendered int    // assignments rendered
	AssignmentsRemoved  int    // previous assignments that no longer exist
}

// Incremental returns what Environment(next) returns, rendering only the assignments that the
// difference between prev's snapshot and next can change and reusing prev's output for the
// rest, and the manifests prev's templates had parsed whose text has not changed. prev, a result of Environment or Incremental for the same environment, is not
// modified and shares its unchanged outputs with the new result; without it (nil, a cold
// start) the whole environment is rendered.
func Incremental(prev *Result, next *scheduling.Snapshot, opts ...Option) (*Result, Stats) {
	if prev == nil || prev.Snapshot == nil {
		return full(next, "no previous result", 0, opts)
	}
	opts = append(slices.Clip(opts), withTemplatesOf(prev), withWorkOf(prev))
	matched := make(chan *scheduling.PolicyMatches, 1)
	go func() { matched <- scheduling.MatchPoliciesSince(prev.matches, next) }() // on another core, while Diff runs
	d := scheduling.Diff(prev.Snapshot, next)
	switch {
	case d.Environment:
		return full(next, "the environment's name changed", d.Count(), opts)
	case d.GitOpsRepo:
		return full(next, "the GitOpsRepo changed", d.Count(), opts)
	}
	imp := newImpact(d, prev.Snapshot, next)
	if imp.all {
		return full(next, "a changed config or schema applies to every assignment", d.Count(), opts)
	}
	pm := <-matched
	s := scheduling.Reschedule(prev.Snapshot, prev.Assignments, next, d, scheduling.WithPolicyMatches(pm), scheduling.WithEarlierRows(prev.rows))
	dirty := imp.dirty(s, next, prev)
	var engine *Engine
	fresh := &Result{Failed: map[string]*scheduling.Error{}}
	rendered := make(map[string]Files, len(dirty))
	if len(dirty) > 0 {
		engine = NewEngine(next, opts...)
		fresh.renderAll(engine, dirty, rendered)
	}
	res := &Result{Snapshot: next, Assignments: s.Assignments, Failed: cloneOrNew(prev.Failed), templates: prev.templates, targets: prev.targets, configValues: prev.configValues, composed: prev.composed, rows: s.Rows, matches: pm}
	if engine != nil {
		res.templates, res.configValues, res.composed = engine.templates, engine.config.values, engine.configMemory()
	}
	pathErr := res.setTarget(next)
	ch := res.change(s.Removed, rendered, fresh.Failed)
	// every assignment has either outputs or a failure, as in the result it comes from
	res.Outputs = prev.Outputs.withLen(ch, len(s.Assignments)-len(res.Failed))
	res.Errors = allErrors(next, pathErr, s, res.Failed, res.templates)
	res.Since = lineage(prev, s.Removed, dirty)
	return res, Stats{Changes: d.Count(), AssignmentsRendered: len(dirty), AssignmentsRemoved: len(s.Removed)}
}

// lineage records that a result comes from prev, with the removed and the dirty assignments.
func lineage(prev *Result, removed, dirty []*scheduling.Assignment) Lineage {
	keys := make([]string, 0, len(removed)+len(dirty))
	for _, list := range [][]*scheduling.Assignment{removed, dirty} {
		for _, a := range list {
			keys = append(keys, a.Key())
		}
	}
	sort.Strings(keys)
	return Lineage{From: weak.Make(prev), Keys: slices.Compact(keys)}
}

func full(next *scheduling.Snapshot, reason string, changes int, opts []Option) (*Result, Stats) {
	res := Environment(next, opts...)
	return res, Stats{Full: true, Reason: reason, Changes: changes, AssignmentsRendered: len(res.Assignments)}
}

func cloneOrNew[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return maps.Clone(m)
}

// had reports whether key was an assignment of the result, rendered or failed.
func (r *Result) had(key string) bool {
	if _, ok := r.Outputs.Get(key); ok {
		return true
	}
	_, ok := r.Failed[key]
	return ok
}

// change brings r.Failed up to date and returns the change of the outputs: the removed
// assignments lose their output or failure, and each assignment rendered again has either
// its output or its failure, and loses what it had of the other.
func (r *Result) change(removed []*scheduling.Assignment, rendered map[string]Files, failed map[string]*scheduling.Error) layer {
	ch := make(layer, len(removed)+len(rendered)+len(failed))
	for _, a := range removed {
		key := a.Key()
		ch[key] = slot{gone: true}
		delete(r.Failed, key)
	}
	for key, files := range rendered {
		ch[key] = slot{files: files}
		delete(r.Failed, key)
	}
	for key, err := range failed {
		ch[key] = slot{gone: true}
		r.Failed[key] = err
	}
	return ch
}

// setTarget sets Root and HasTarget from the snapshot's GitOpsRepo, as Environment does, and
// returns the problem with its path, if any.
func (r *Result) setTarget(snap *scheduling.Snapshot) *scheduling.Error {
	if snap.GitOpsRepo == nil {
		return nil
	}
	root, err := scheduling.SubPath(snap.GitOpsRepo.Spec.Path)
	if err != nil {
		var es scheduling.Errors
		es.Add(snap.GitOpsRepo.At("spec.path"), snap.GitOpsRepo.Ref(), "%v", err)
		return es[0]
	}
	r.Root, r.HasTarget = root, true
	return nil
}

// allErrors is every problem of a result, as Environment lists them: the snapshot's, the
// GitOps path's and the failures, grouped as renderAll groups them (grouping does not depend
// on the order of the assignments, only on which failed), and the files' own (see fileErrors),
// the templates compiled being those of the result.
func allErrors(snap *scheduling.Snapshot, pathErr *scheduling.Error, s *scheduling.Rescheduled, failed map[string]*scheduling.Error, compiled map[string]*compiledTemplate) scheduling.Errors {
	errs := make(scheduling.Errors, 0, len(snap.Errors)+1+len(failed))
	errs = append(errs, snap.Errors...)
	if pathErr != nil {
		errs = append(errs, pathErr)
	}
	keys := make([]string, 0, len(failed))
	for k := range failed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	list := make([]*scheduling.Assignment, 0, len(keys))
	for _, k := range keys {
		i, ok := indexOf(snap, s, k)
		if !ok {
			panic(fmt.Sprintf("render: failed assignment %s is not scheduled", k))
		}
		list = append(list, s.Assignments[i])
	}
	return withFileErrors(append(errs, groupFailures(list, failed)...), snap, compiled).Sorted()
}

// indexOf finds the assignment of a key in a schedule, by binary search.
func indexOf(snap *scheduling.Snapshot, s *scheduling.Rescheduled, key string) (int, bool) {
	ctName, target, _ := strings.Cut(key, "/")
	cts := snap.ClusterTypes
	ci := sort.Search(len(cts), func(i int) bool { return cts[i].Name >= ctName })
	if ci == len(cts) || cts[ci].Name != ctName {
		return 0, false
	}
	i, ok := findTarget(s.Assignments[s.Rows[ci]:s.Rows[ci+1]], target)
	return s.Rows[ci] + i, ok
}
