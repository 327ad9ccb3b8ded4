package scheduling

import (
	"io/fs"
	"sort"
)

// EnvironmentsDir is the folder of main that declares the environments, as in the reference.
const EnvironmentsDir = ".environments"

// LoadEnvironments reads the Environments declared in `.environments/` of main, sorted by name.
func LoadEnvironments(main Source) ([]*Environment, Errors) {
	var objs objects
	var errs Errors
	if _, err := fs.Stat(main.FS, EnvironmentsDir); err != nil {
		return nil, nil // no .environments folder: no environments
	}
	l := newLoader(Policy{}, &errs)
	defer l.stop()
	l.source(Source{FS: main.FS, Prefix: main.Prefix}, EnvironmentsDir, &objs)
	envs := dedupe(objs.environments, &errs)
	sort.Slice(envs, func(i, j int) bool { return envs[i].Name < envs[j].Name })
	for _, e := range envs {
		ParseGuard(e, &errs)
	}
	return envs, errs.Sorted().CapPerFile(MaxErrorsPerFile)
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
	l.source(env, "", &objs)
	for _, b := range objs.baseRepos {
		if b.Name == "main" {
			return b.Pos.File, b.Spec.Commit, true
		}
	}
	return "", "", false
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
