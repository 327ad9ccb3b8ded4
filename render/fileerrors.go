package render

import (
	"fmt"
	"maps"
	"slices"
	"text/template"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// fileErrors are the problems of an environment's files that no assignment needs to show, so
// that each file's own errors are reported in one pass whatever else is broken: Templates
// whose manifests do not parse (used by a cluster type or not, their metadata valid or not),
// ClusterTypes naming templates that do not exist (scheduled or not), and ConfigSchemas that
// are not valid JSON schemas (applied or not). Assignments that depend on them report the same
// problems, which de-duplication merges.
// Templates are parsed here unless compiled holds them (see compiledError).
func fileErrors(snap *scheduling.Snapshot, compiled map[string]*compiledTemplate) scheduling.Errors {
	var errs scheduling.Errors
	var fm template.FuncMap
	parse := func(t *scheduling.Template) *scheduling.Error {
		if fm == nil {
			fm = parseFuncMap()
		}
		return parseManifests(t, fm)
	}
	known := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(snap.Templates)) {
		known[name] = true
		t := snap.Templates[name]
		err, ok := compiledError(compiled[name], t)
		if !ok {
			err = parse(t)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, t := range snap.UnusableTemplates {
		if err := parse(t); err != nil {
			errs = append(errs, err)
		}
	}
	for _, b := range snap.Broken {
		if b.Kind == scheduling.KindTemplate {
			known[b.Name] = true
		}
	}
	for _, ct := range snap.ClusterTypes {
		for _, role := range [3]struct{ field, name string }{
			{"spec.reconciler", ct.Spec.Reconciler}, {"spec.namespaceService", ct.Spec.NamespaceService}, {"spec.configType", ct.Spec.ConfigType},
		} {
			if !known[role.name] {
				errs = append(errs, &scheduling.Error{Pos: ct.At(role.field), Object: ct.Ref(), Msg: fmt.Sprintf("%s: template %q does not exist", role.field, role.name)})
			}
		}
	}
	for _, s := range snap.ConfigSchemas {
		if _, err := CompileSchema(s.Name, s.Spec.Schema.Value); err != nil {
			errs = append(errs, &scheduling.Error{Pos: scheduling.Pos{File: s.Pos.File, Line: s.Spec.Schema.Line}, Object: s.Ref(), Msg: oneLine(err.Error())})
		}
	}
	return errs
}

// parseFuncMap has every function name templates may call, for parsing only.
func parseFuncMap() template.FuncMap {
	fm := FuncMap()
	for _, name := range []string{"toYaml", "stringify", tickFunc} {
		fm[name] = func() string { return "" }
	}
	return fm
}

// parseManifests parses a Template's manifests as the engine does; the first error, located.
func parseManifests(t *scheduling.Template, fm template.FuncMap) *scheduling.Error {
	for i, m := range t.Spec.Manifests {
		if _, err := template.New(manifestName(t.Name, i)).Funcs(fm).Parse(m.Value); err != nil {
			return templateError(t, m, err)
		}
	}
	return nil
}

// compiledError returns the parse error of t known from ct, a template an engine compiled, and
// whether it is known: ct's error when ct is t compiled, none when ct is an earlier version of t
// whose manifests all parsed and have the same text (the previous result's templates, when an
// incremental render needs no engine of its own).
func compiledError(ct *compiledTemplate, t *scheduling.Template) (*scheduling.Error, bool) {
	switch {
	case ct == nil || ct.tpl == nil:
		return nil, false
	case ct.tpl == t:
		return ct.err, true
	}
	if ct.err != nil || len(ct.parsed) != len(t.Spec.Manifests) {
		return nil, false
	}
	for i, m := range t.Spec.Manifests {
		if ct.parsedText(i, m.Value) == nil {
			return nil, false
		}
	}
	return nil, true
}

// withFileErrors adds the file errors of a snapshot to a result's errors; compiled are the
// templates of the engine that rendered it, or of the result it comes from.
func withFileErrors(errs scheduling.Errors, snap *scheduling.Snapshot, compiled map[string]*compiledTemplate) scheduling.Errors {
	return slices.Concat(errs, fileErrors(snap, compiled))
}
