package gitsource

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// MainBranch is the control-plane branch that declares environments, templates and workloads.
const MainBranch = "main"

// Inputs reads an environment's sources from a local clone of the control-plane repository:
// the Environment from main's HEAD, its branch, and main at the commit its BaseRepo pins.
// Options (Limits) bound what is read of each branch, as loading bounds each source.
func Inputs(repo *git.Repository, envName string, workloads scheduling.WorkloadSource, opts ...Option) (scheduling.Inputs, scheduling.Errors, error) {
	return InputsWithMain(repo, envName, workloads, plumbing.ZeroHash, opts...)
}

// InputsWithMain is Inputs with main read at the given commit instead of the pinned one (zero:
// the pin), to check a main commit against an environment before it is promoted.
func InputsWithMain(repo *git.Repository, envName string, workloads scheduling.WorkloadSource, main plumbing.Hash, opts ...Option) (scheduling.Inputs, scheduling.Errors, error) {
	return InputsAt(repo, envName, workloads, main, plumbing.ZeroHash, opts...)
}

// InputsAt is InputsWithMain with the environment branch read at envAt instead of its head
// (zero: the head), e.g. a pull request's commit into that branch. Paths keep the branch's
// prefix, so that errors name the branch's files.
func InputsAt(repo *git.Repository, envName string, workloads scheduling.WorkloadSource, main, envAt plumbing.Hash, opts ...Option) (scheduling.Inputs, scheduling.Errors, error) {
	in := scheduling.Inputs{Environment: envName, Workloads: workloads}
	head, err := Resolve(repo, MainBranch)
	if err != nil {
		return in, nil, err
	}
	decls, err := declarations(repo, head, opts)
	if err != nil {
		return in, nil, err
	}
	errs := errorsOf(decls)
	env := scheduling.FindEnvironment(decls.Environments, envName)
	if env == nil {
		return in, errs, UndeclaredError(decls, envName, MainBranch+":"+scheduling.EnvironmentsDir+"/")
	}
	branch := env.Spec.ControlPlane.Branch
	envCommit := envAt
	if envCommit.IsZero() {
		if envCommit, err = Resolve(repo, branch); err != nil {
			return in, errs, fmt.Errorf("environment %q: branch %q: %w", envName, branch, err)
		}
	}
	dir, err := scheduling.SubPath(env.Spec.ControlPlane.Path)
	if err != nil {
		return in, errs, fmt.Errorf("environment %q: %w", envName, err)
	}
	envFS, err := TreeFS(repo, envCommit, append(opts[:len(opts):len(opts)], Root(dir))...)
	if err != nil {
		return in, errs, err
	}
	if envFS, err = Sub(envFS, dir); err != nil {
		return in, errs, fmt.Errorf("environment %q: %w", envName, err)
	}
	in.Env = scheduling.Source{FS: envFS, Name: branch, Prefix: branch + ":" + dirPrefix(dir), Commit: envCommit.String()}
	if main.IsZero() {
		in.Main, err = pinnedMain(repo, in.Env, head, opts)
	} else {
		in.Main, err = mainAt(repo, main, opts)
	}
	return in, errs, err
}

// ErrInvalidEnvironment is returned for an environment that main declares, but invalidly: its
// errors say why.
var ErrInvalidEnvironment = errors.New("declared but invalid")

// ErrUndeclaredEnvironment is returned for an environment that main does not declare.
var ErrUndeclaredEnvironment = errors.New("not declared")

// UndeclaredError says why an environment is not among the valid ones main declares in folder:
// declared but invalid (ErrInvalidEnvironment), or not declared (ErrUndeclaredEnvironment).
func UndeclaredError(decls *scheduling.Declarations, name, folder string) error {
	if o := decls.InvalidOne(name); o != nil {
		return fmt.Errorf("environment %q is %w at %s (see its errors)", name, ErrInvalidEnvironment, o.Pos)
	}
	return fmt.Errorf("environment %q is %w in %s", name, ErrUndeclaredEnvironment, folder)
}

// MissingCommitError says that the main commit an environment branch pins is not in the repository.
type MissingCommitError struct {
	Commit   string // the commit as pinned
	PinnedBy string // the environment branch that pins it
	Err      error  // why it could not be read
}

// Error implements error.
func (e *MissingCommitError) Error() string {
	return fmt.Sprintf("main commit %s pinned by branch %s (BaseRepo \"main\" spec.commit) is not in the repository: %v", e.Commit, e.PinnedBy, e.Err)
}

// Unwrap returns the underlying error.
func (e *MissingCommitError) Unwrap() error { return e.Err }

func dirPrefix(dir string) string {
	if dir == "" {
		return ""
	}
	return dir + "/"
}

// pinnedMain returns main at the commit the environment's BaseRepo "main" pins (HEAD when unpinned).
func pinnedMain(repo *git.Repository, env scheduling.Source, head plumbing.Hash, opts []Option) (scheduling.Source, error) {
	commit := head
	if pin := pinnedCommit(env, cacheOf(opts)); pin != "" {
		h, err := Resolve(repo, pin)
		if err != nil {
			return scheduling.Source{}, &MissingCommitError{Commit: pin, PinnedBy: env.Name, Err: err}
		}
		commit = h
	}
	return mainAt(repo, commit, opts)
}

// cacheOf is the cache options read through (nil: none).
func cacheOf(opts []Option) *Cache {
	var o treeOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o.cache
}

func mainAt(repo *git.Repository, commit plumbing.Hash, opts []Option) (scheduling.Source, error) {
	fsys, err := TreeFS(repo, commit, opts...)
	if err != nil {
		return scheduling.Source{}, err
	}
	return scheduling.Source{FS: fsys, Name: MainBranch, Prefix: MainPrefix(commit.String()), Commit: commit.String()}, nil
}

// MainPrefix is how paths of main at a commit appear in error positions.
func MainPrefix(commit string) string {
	return MainBranch + "@" + commit[:min(7, len(commit))] + ":"
}

// MainEnvironments reads the Environments declared in .environments/ at the head of the
// remote-tracking main of a cached repository; none when main does not exist. Problems in
// the declarations are left to whoever validates main.
func MainEnvironments(repo *git.Repository) ([]*scheduling.Environment, error) {
	ref, err := repo.Reference(plumbing.NewRemoteReferenceName("origin", MainBranch), true)
	if err != nil {
		return nil, nil
	}
	fsys, err := TreeFS(repo, ref.Hash())
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", MainBranch, err)
	}
	envs, _ := scheduling.LoadEnvironments(scheduling.Source{FS: fsys})
	return envs, nil
}
