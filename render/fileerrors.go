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
// The engine's templates are used when there is an engine (nil: they are parsed here).
func fileErrors(snap *scheduling.Snapshot, e *Engine) scheduling.Errors {
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
		err := (*scheduling.Error)(nil)
		if ct, ok := e.compiledTemplate(name); ok {
			err = ct.err
		} else {
			err = parse(snap.Templates[name])
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

// compiledTemplate returns the engine's compiled valid Template of a name; false without an engine.
func (e *Engine) compiledTemplate(name string) (*compiledTemplate, bool) {
	if e == nil {
		return nil, false
	}
	ct, ok := e.templates[name]
	return ct, ok && ct.tpl != nil
}

// withFileErrors adds the file errors of a snapshot to a result's errors.
func withFileErrors(errs scheduling.Errors, snap *scheduling.Snapshot, e *Engine) scheduling.Errors {
	return slices.Concat(errs, fileErrors(snap, e))
}
