// Package fleetgit holds a synthetic fleet's sources as the app holds them: git trees in go-git
// memory storage (the control-plane repository with its main and environment branches, one
// repository per workload), read through the app's loading path (gitsource), so that measuring
// a change measures the reading of git trees.
package fleetgit

import (
	"bytes"
	"fmt"
	"maps"
	"path"
	"strings"
	"sync"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/kalypso-gitops/kalypso/internal/fleet"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Repos are the git repositories of a fleet. Sync commits the fleet's files after edits.
type Repos struct {
	fleet        *fleet.Fleet
	ControlPlane *git.Repository
	workloads    map[string]*branch // by OWNER/REPO/BRANCH
	main, env    *branch
	clock        time.Time
	mu           sync.Mutex
	specs        map[scheduling.ManifestsSpec]registered // what each registration names, parsed once
}

// registered is what a registration's workload spec names: the branch (by OWNER/REPO/BRANCH),
// the folder read, and how the source is named; or why it names none.
type registered struct {
	branch, dir, name, prefix string
	err                       error
}

// branch is a branch of a repository and the files of its last commit.
type branch struct {
	repo  *git.Repository
	name  string
	head  plumbing.Hash
	files map[string][]byte
	at    string // head as a string
}

// New commits the fleet's files into memory repositories.
func New(f *fleet.Fleet) (*Repos, error) {
	cp, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		return nil, err
	}
	r := &Repos{fleet: f, ControlPlane: cp, workloads: map[string]*branch{}, clock: time.Unix(1_700_000_000, 0).UTC(),
		specs: map[scheduling.ManifestsSpec]registered{},
		main:  &branch{repo: cp, name: gitsource.MainBranch}, env: &branch{repo: cp, name: f.Spec.Environment}}
	return r, r.Sync()
}

// environmentDoc declares the environment in main: its name, repository and branch.
const environmentDoc = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata:
  name: %s
spec:
  controlPlane:
    repo: %s
    branch: %s
    path: .
`

// Sync commits what changed in the fleet's files since the last commit of each branch, one
// commit per changed branch; the environment branch pins main's head (its BaseRepo commit).
func (r *Repos) Sync() error {
	env := r.fleet.Spec.Environment
	main := maps.Clone(r.fleet.Main)
	main[scheduling.EnvironmentsDir+"/"+env+".yaml"] = &fstest.MapFile{Data: fmt.Appendf(nil, environmentDoc, env, fleet.ControlPlaneURL, env)}
	if err := r.commit(r.main, main); err != nil {
		return err
	}
	envFiles := maps.Clone(r.fleet.Env)
	if f, ok := envFiles["base-repo.yaml"]; ok {
		envFiles["base-repo.yaml"] = &fstest.MapFile{Data: bytes.ReplaceAll(f.Data, []byte(fleet.MainCommit), []byte(r.main.head.String()))}
	}
	if err := r.commit(r.env, envFiles); err != nil {
		return err
	}
	for key, files := range byBranch(r.fleet.Workloads) {
		b := r.workloads[key]
		if b == nil {
			repo, err := git.Init(memory.NewStorage(), nil)
			if err != nil {
				return err
			}
			b = &branch{repo: repo, name: path.Base(key)}
			r.workloads[key] = b
		}
		if err := r.commit(b, files); err != nil {
			return err
		}
	}
	return nil
}

// byBranch splits OWNER/REPO/BRANCH/PATH files by OWNER/REPO/BRANCH.
func byBranch(files fstest.MapFS) map[string]fstest.MapFS {
	out := map[string]fstest.MapFS{}
	for p, f := range files {
		parts := strings.SplitN(p, "/", 4)
		if len(parts) < 4 {
			continue
		}
		key := strings.Join(parts[:3], "/")
		if out[key] == nil {
			out[key] = fstest.MapFS{}
		}
		out[key][parts[3]] = f
	}
	return out
}

// commit commits files on b when they differ from its last commit.
func (r *Repos) commit(b *branch, files fstest.MapFS) error {
	changes := map[string][]byte{}
	for p, f := range files {
		if old, ok := b.files[p]; !ok || !bytes.Equal(old, f.Data) {
			changes[p] = bytes.Clone(f.Data)
		}
	}
	for p := range b.files {
		if _, ok := files[p]; !ok {
			changes[p] = nil
		}
	}
	if len(changes) == 0 && !b.head.IsZero() {
		return nil
	}
	base := plumbing.ZeroHash
	if !b.head.IsZero() {
		c, err := b.repo.CommitObject(b.head)
		if err != nil {
			return err
		}
		base = c.TreeHash
	}
	tree, err := gitops.Edit(b.repo, base, changes)
	if err != nil {
		return fmt.Errorf("%s: %w", b.name, err)
	}
	r.clock = r.clock.Add(time.Second)
	head, err := gitops.Commit(b.repo, tree, b.head, "change\n", r.clock)
	if err != nil {
		return fmt.Errorf("%s: %w", b.name, err)
	}
	if err := b.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(b.name), head)); err != nil {
		return err
	}
	b.head, b.at = head, head.String()
	if b.files == nil {
		b.files = map[string][]byte{}
	}
	for p, c := range changes {
		if c == nil {
			delete(b.files, p)
		} else {
			b.files[p] = c
		}
	}
	return nil
}

// Inputs reads the environment's sources from the repositories as the app reads them
// (gitsource), within pol's limits and through cache (nil: from scratch).
func (r *Repos) Inputs(cache *gitsource.Cache, pol scheduling.Policy) (scheduling.Inputs, scheduling.Errors, error) {
	opts := []gitsource.Option{gitsource.Limits(pol), gitsource.WithCache(cache)}
	ws := workloadSource{repos: r, opts: opts}
	in, errs, err := gitsource.Inputs(r.ControlPlane, r.fleet.Spec.Environment, ws, opts...)
	in.Policy = pol
	return in, errs, err
}

// workloadSource reads workload repositories' folders from git.
type workloadSource struct {
	repos *Repos
	opts  []gitsource.Option
}

// Workload implements scheduling.WorkloadSource.
func (w workloadSource) Workload(spec scheduling.ManifestsSpec) (scheduling.Source, error) {
	reg := w.repos.registered(spec)
	if reg.err != nil {
		return scheduling.Source{}, reg.err
	}
	b := w.repos.workloads[reg.branch]
	if b == nil {
		return scheduling.Source{}, fmt.Errorf("%s has no branch %q", spec.Repo, spec.Branch)
	}
	fsys, err := gitsource.TreeFS(b.repo, b.head, append([]gitsource.Option{gitsource.Under(reg.dir)}, w.opts...)...)
	if err != nil {
		return scheduling.Source{}, err
	}
	return scheduling.Source{FS: fsys, Name: reg.name, Prefix: reg.prefix, Commit: b.at}, nil
}

// registered parses what spec names, once per spec.
func (r *Repos) registered(spec scheduling.ManifestsSpec) registered {
	r.mu.Lock()
	defer r.mu.Unlock()
	if reg, ok := r.specs[spec]; ok {
		return reg
	}
	reg := parseSpec(spec)
	r.specs[spec] = reg
	return reg
}

// parseSpec is what spec names.
func parseSpec(spec scheduling.ManifestsSpec) registered {
	owner, name, err := scheduling.RepoSlug(spec.Repo)
	if err != nil {
		return registered{err: err}
	}
	dir, err := scheduling.SubPath(spec.Path)
	if err != nil {
		return registered{err: err}
	}
	slug := owner + "/" + name
	return registered{branch: slug + "/" + spec.Branch, dir: dir, name: slug, prefix: slug + "@" + spec.Branch + ":"}
}

// Files is the number of files committed on every branch together.
func (r *Repos) Files() int {
	n := len(r.main.files) + len(r.env.files)
	for _, b := range r.workloads {
		n += len(b.files)
	}
	return n
}
