package render

import (
	"fmt"
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
func fileErrors(snap *scheduling.Snapshot) scheduling.Errors {
	var errs scheduling.Errors
	fm := parseFuncMap()
	known := map[string]bool{}
	for name, t := range snap.Templates {
		known[name] = true
		if err := parseManifests(t, fm); err != nil {
			errs = append(errs, err)
		}
	}
	for _, t := range snap.UnusableTemplates {
		if err := parseManifests(t, fm); err != nil {
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

// withFileErrors adds the file errors of a snapshot to a result's errors.
func withFileErrors(errs scheduling.Errors, snap *scheduling.Snapshot) scheduling.Errors {
	return slices.Concat(errs, fileErrors(snap))
}
