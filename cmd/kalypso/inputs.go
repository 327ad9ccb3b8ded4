package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"

	"github.com/kalypso-gitops/kalypso/config"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// inputFlags are the flags that say where a control plane is read from.
type inputFlags struct {
	mainDir, envDir, workloadsDir string
	repo, environment             string
}

func (f *inputFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mainDir, "main-dir", "", "directory mode: the content of the control plane's main branch at the pinned commit")
	fs.StringVar(&f.envDir, "env-dir", "", "directory mode: the content of the environment's branch of the control plane")
	fs.StringVar(&f.workloadsDir, "workloads-dir", "", "directory holding workload sources as OWNER/REPO/BRANCH/PATH (default in git mode: clone each registered repository)")
	fs.StringVar(&f.repo, "repo", "", "git mode: path of a local clone of the control-plane repository")
	fs.StringVar(&f.environment, "environment", "", "the environment's name (required in git mode; in directory mode defaults to the Environment whose branch is the --env-dir folder's name)")
}

// load reads the snapshot of the environment the flags describe.
func (f *inputFlags) load() (*scheduling.Snapshot, error) {
	in, errs, err := f.inputs()
	if err != nil {
		return nil, err
	}
	in.Policy = f.policy()
	snap := scheduling.Load(in)
	snap.Errors = append(errs, snap.Errors...).Sorted()
	return snap, nil
}

// policy is what the command allows the sources, as the app does by default: YAML files up
// to 4 MiB, and deployment targets whose manifests.repo is on the GitHub host.
func (f *inputFlags) policy() scheduling.Policy {
	return scheduling.Policy{ManifestHosts: []string{"github.com"}, MaxFileBytes: int64(config.DefaultMaxFileBytes)}
}

func (f *inputFlags) inputs() (scheduling.Inputs, scheduling.Errors, error) {
	switch {
	case f.repo != "" && (f.mainDir != "" || f.envDir != ""):
		return scheduling.Inputs{}, nil, errors.New("flag --repo (git mode) cannot be combined with --main-dir or --env-dir (directory mode)")
	case f.repo != "":
		return f.gitInputs()
	case f.mainDir == "" || f.envDir == "":
		return scheduling.Inputs{}, nil, errors.New("flags --main-dir and --env-dir are required (or --repo and --environment for git mode)")
	}
	return f.dirInputs()
}

func (f *inputFlags) dirInputs() (scheduling.Inputs, scheduling.Errors, error) {
	for flagName, dir := range map[string]string{"--main-dir": f.mainDir, "--env-dir": f.envDir, "--workloads-dir": f.workloadsDir} {
		if dir == "" {
			continue
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return scheduling.Inputs{}, nil, fmt.Errorf("flag %s: %q is not a directory", flagName, dir)
		}
	}
	main := scheduling.Source{FS: os.DirFS(f.mainDir), Name: "main", Prefix: displayDir(f.mainDir)}
	envs, errs := scheduling.LoadEnvironments(main)
	name := f.environment
	if name == "" {
		name = defaultEnvironment(envs, filepath.Base(filepath.Clean(f.envDir)))
	}
	in := scheduling.Inputs{
		Environment: name,
		Env:         scheduling.Source{FS: os.DirFS(f.envDir), Name: name, Prefix: displayDir(f.envDir)},
		Main:        main,
	}
	if f.workloadsDir != "" {
		in.Workloads = dirWorkloads(f.workloadsDir)
	}
	return in, errs, nil
}

// defaultEnvironment names the environment whose control-plane branch is the folder's name.
func defaultEnvironment(envs []*scheduling.Environment, folder string) string {
	for _, e := range envs {
		if e.Spec.ControlPlane.Branch == folder {
			return e.Name
		}
	}
	return folder
}

func displayDir(dir string) string {
	return strings.TrimSuffix(filepath.ToSlash(filepath.Clean(dir)), "/") + "/"
}

func (f *inputFlags) gitInputs() (scheduling.Inputs, scheduling.Errors, error) {
	if f.environment == "" {
		return scheduling.Inputs{}, nil, errors.New("flag --environment is required with --repo")
	}
	repo, err := git.PlainOpen(f.repo)
	if err != nil {
		return scheduling.Inputs{}, nil, fmt.Errorf("flag --repo: open %s: %w", f.repo, err)
	}
	var ws scheduling.WorkloadSource = gitsource.NewCloner(os.Getenv("GITHUB_TOKEN"))
	if f.workloadsDir != "" {
		ws = dirWorkloads(f.workloadsDir)
	}
	return gitsource.Inputs(repo, f.environment, ws)
}

func dirWorkloads(dir string) scheduling.WorkloadSource {
	return scheduling.TreeWorkloads(os.DirFS(dir), displayDir(dir))
}
