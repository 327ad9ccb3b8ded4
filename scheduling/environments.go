package scheduling

import (
	"io/fs"
	"sort"
)

// EnvironmentsDir is the folder of main that declares the environments, as in the reference.
const EnvironmentsDir = ".environments"

// LoadEnvironments reads the Environments declared in `.environments/` of main, sorted by
// name. Its errors are every problem of the declarations: decoding, guards and promotion
// settings (an unknown upstream, a cycle, a bad duration), as main's check run reports them.
func LoadEnvironments(main Source) ([]*Environment, Errors) {
	d := LoadDeclarations(main)
	return d.Environments, d.Errors
}

// Declarations are the Environments main declares in `.environments/`.
type Declarations struct {
	Environments []*Environment // the valid ones, sorted by name
	Invalid      []*Object      // those declared but invalid, as far as they can be read
	Errors       Errors
}

// InvalidOne returns the declaration of a named environment that is declared but invalid, or nil.
func (d *Declarations) InvalidOne(name string) *Object {
	for _, o := range d.Invalid {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// LoadDeclarations reads the Environments declared in `.environments/` of main, valid and not.
func LoadDeclarations(main Source) *Declarations {
	var objs objects
	d := &Declarations{}
	if _, err := fs.Stat(main.FS, EnvironmentsDir); err != nil {
		return d // no .environments folder: no environments
	}
	l := newLoader(Policy{}, &d.Errors)
	defer l.stop()
	l.source(Source{FS: main.FS, Prefix: main.Prefix}, EnvironmentsDir, &objs)
	envs := dedupe(objs.environments, &d.Errors)
	sort.Slice(envs, func(i, j int) bool { return envs[i].Name < envs[j].Name })
	for _, e := range envs {
		ParseGuard(e, &d.Errors)
	}
	applyFreezes(dedupeFreezes(objs.freezes, &d.Errors), envs, &d.Errors)
	_, chainErrs := PromotionChain(envs)
	d.Errors = append(d.Errors, chainErrs...)
	for _, b := range objs.broken {
		if b.Kind == KindEnvironment && b.Name != "" {
			d.Invalid = append(d.Invalid, b)
		}
	}
	d.Environments, d.Errors = envs, d.Errors.Sorted().CapPerFile(MaxErrorsPerFile)
	return d
}

// FindEnvironment returns the environment with the given name, or nil.
func FindEnvironment(envs []*Environment, name string) *Environment {
	for _, e := range envs {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// PinnedCommit returns the commit that the BaseRepo "main" of an environment branch pins, or "".
func PinnedCommit(env Source) string {
	_, commit, _ := FindBaseRepo(env)
	return commit
}

// FindBaseRepo returns the file (with the source's prefix) that declares BaseRepo "main" and
// the commit it pins.
func FindBaseRepo(env Source) (file, commit string, ok bool) {
	var objs objects
	var errs Errors
	l := newLoader(Policy{}, &errs)
	defer l.stop()
	l.only = mayHold(KindBaseRepo)
	l.source(env, "", &objs)
	for _, b := range objs.baseRepos {
		if b.Name == "main" {
			return b.Pos.File, b.Spec.Commit, true
		}
	}
	return "", "", false
}

// MainPin is FindBaseRepo for one file of an environment branch: the commit the first
// BaseRepo "main" of the file pins, and whether the file declares one. FindBaseRepo's answer is
// that of the first file, in SelectFiles order, that declares one.
func MainPin(name string, data []byte) (commit string, ok bool) {
	if !mayHold(KindBaseRepo)(data) {
		return "", false
	}
	var objs objects
	var errs Errors
	parseFileUntil(name, data, &objs, &errs, func() bool { return false })
	for _, b := range objs.baseRepos {
		if b.Name == "main" {
			return b.Spec.Commit, true
		}
	}
	return "", false
}

// GuardOf returns the parsed guard of the named environment, nil without one. LoadEnvironments
// has already reported its errors.
func GuardOf(envs []*Environment, name string) *Limits {
	e := FindEnvironment(envs, name)
	if e == nil {
		return nil
	}
	var ignored Errors
	return ParseGuard(e, &ignored)
}
