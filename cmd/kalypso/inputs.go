package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"

	"github.com/kalypso-gitops/kalypso/config"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// githubURLVar is the environment variable that sets --github-url's default.
const githubURLVar = "KALYPSO_GITHUB_URL"

// errUndeclaredEnvironment is returned when main declares environments but not the one asked for.
var errUndeclaredEnvironment = gitsource.ErrUndeclaredEnvironment

// inputFlags are the flags that say where a control plane is read from.
type inputFlags struct {
	mainDir, envDir, workloadsDir string
	repo, environment             string
	githubURL                     string
}

func (f *inputFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mainDir, "main-dir", "", "directory mode: the content of the control plane's main branch at the pinned commit (symbolic links below it are errors)")
	fs.StringVar(&f.envDir, "env-dir", "", "directory mode: the content of the environment's branch of the control plane (symbolic links below it are errors)")
	fs.StringVar(&f.workloadsDir, "workloads-dir", "", "directory holding workload sources as OWNER/REPO/BRANCH/PATH, needed in directory mode when workloads are registered\n"+
		"(default in git mode: clone each registered repository; symbolic links below it are errors)")
	fs.StringVar(&f.repo, "repo", "", "git mode: path of a local clone of the control-plane repository")
	fs.StringVar(&f.environment, "environment", "", "the environment's name (required in git mode; in directory mode defaults to the Environment whose branch is the --env-dir folder's name;\n"+
		"when main declares environments in .environments/, it must be one of them)")
	fs.StringVar(&f.githubURL, "github-url", envOr(githubURLVar, gitsource.DefaultGitHubURL),
		"git mode: the GitHub (https://HOST, GitHub Enterprise Server included) that GITHUB_TOKEN is sent to when cloning\n"+
			"registered workload repositories over HTTPS; other hosts and plain http:// are read anonymously, other schemes refused.\n"+
			"Default from $"+githubURLVar+". A certificate from a private authority is trusted through $SSL_CERT_FILE")
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// load reads the snapshot of the environment the flags describe; notices go to stderr. On an
// error it also returns the problems found on the way (a broken environment declaration).
func (f *inputFlags) load(stderr io.Writer) (*scheduling.Snapshot, scheduling.Errors, error) {
	in, errs, err := f.inputs(stderr)
	if err != nil {
		return nil, errs, err
	}
	in.Policy = f.policy()
	snap := scheduling.Load(in)
	snap.Errors = append(errs, snap.Errors...).Sorted()
	return snap, nil, nil
}

// policy is what the command allows the sources, as the app does by default: the default
// limits of sources.*, and deployment targets whose manifests.repo is on the --github-url host.
func (f *inputFlags) policy() scheduling.Policy {
	p := config.Default(nil).SourcePolicy()
	p.ManifestHosts = nil
	if u, err := url.Parse(f.githubURL); err == nil && u.Host != "" {
		p.ManifestHosts = []string{u.Host}
	}
	return p
}

func (f *inputFlags) inputs(stderr io.Writer) (scheduling.Inputs, scheduling.Errors, error) {
	github, err := gitsource.ParseGitHubURL(f.githubURL)
	if err != nil {
		return scheduling.Inputs{}, nil, fmt.Errorf("flag --github-url (or $%s): %w", githubURLVar, err)
	}
	switch {
	case f.repo != "" && (f.mainDir != "" || f.envDir != ""):
		return scheduling.Inputs{}, nil, errors.New("flag --repo (git mode) cannot be combined with --main-dir or --env-dir (directory mode)")
	case f.repo != "":
		return f.gitInputs(github, stderr)
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
	main := scheduling.Source{FS: linkFreeDirFS(f.mainDir), Name: "main", Prefix: displayDir(f.mainDir)}
	decls := scheduling.LoadDeclarations(main)
	errs := decls.Errors
	name, err := f.dirEnvironment(decls, main.Prefix)
	if err != nil {
		return scheduling.Inputs{}, errs, err
	}
	in := scheduling.Inputs{
		Environment: name,
		Env:         scheduling.Source{FS: linkFreeDirFS(f.envDir), Name: name, Prefix: displayDir(f.envDir)},
		Main:        main,
		Workloads:   noWorkloadsDir{},
	}
	if f.workloadsDir != "" {
		in.Workloads = dirWorkloads(f.workloadsDir)
	}
	return in, errs, nil
}

// dirEnvironment names the environment of directory mode: --environment, or the Environment
// whose branch is the --env-dir folder's name, or that name. When main declares environments,
// the name must be one of them.
func (f *inputFlags) dirEnvironment(decls *scheduling.Declarations, mainPrefix string) (string, error) {
	envs := decls.Environments
	name, from := f.environment, "flag --environment"
	if name == "" {
		folder := filepath.Base(filepath.Clean(f.envDir))
		name, from = defaultEnvironment(envs, folder), "the --env-dir folder name; name it with --environment"
	}
	if decls.InvalidOne(name) != nil {
		return "", gitsource.UndeclaredError(decls, name, mainPrefix+scheduling.EnvironmentsDir+"/")
	}
	if len(envs) == 0 || scheduling.FindEnvironment(envs, name) != nil {
		return name, nil
	}
	declared := make([]string, len(envs))
	hint := ""
	for i, e := range envs {
		declared[i] = e.Name
		if strings.EqualFold(e.Name, name) {
			hint = fmt.Sprintf(" (did you mean %q?)", e.Name)
		}
	}
	return "", fmt.Errorf("environment %q (from %s) is %w in %s%s/%s; declared: %s",
		name, from, errUndeclaredEnvironment, mainPrefix, scheduling.EnvironmentsDir, hint, strings.Join(declared, ", "))
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

func (f *inputFlags) gitInputs(github *url.URL, stderr io.Writer) (scheduling.Inputs, scheduling.Errors, error) {
	if f.environment == "" {
		return scheduling.Inputs{}, nil, errors.New("flag --environment is required with --repo")
	}
	repo, err := git.PlainOpen(f.repo)
	if err != nil {
		return scheduling.Inputs{}, nil, fmt.Errorf("flag --repo: open %s: %w", f.repo, err)
	}
	var ws scheduling.WorkloadSource = gitsource.NewCloner(os.Getenv("GITHUB_TOKEN"), github, stderr)
	if f.workloadsDir != "" {
		ws = dirWorkloads(f.workloadsDir)
	}
	in, errs, err := gitsource.Inputs(repo, f.environment, ws, gitsource.Limits(f.policy()))
	in.Seniority = func(reg *scheduling.WorkloadRegistration) int64 { return gitsource.RegistrationAge(repo, in, reg) }
	return in, errs, err
}

func dirWorkloads(dir string) scheduling.WorkloadSource {
	return scheduling.TreeWorkloads(linkFreeDirFS(dir), displayDir(dir))
}

// errNoWorkloadsDir says that directory mode needs --workloads-dir to read registrations.
var errNoWorkloadsDir = errors.New("directory mode reads registered workloads only from --workloads-dir DIR (checkouts as DIR/OWNER/REPO/BRANCH)")

// noWorkloadsDir is the workload source of directory mode without --workloads-dir.
type noWorkloadsDir struct{}

// Workload implements scheduling.WorkloadSource.
func (noWorkloadsDir) Workload(spec scheduling.ManifestsSpec) (scheduling.Source, error) {
	return scheduling.Source{}, fmt.Errorf("%s branch %s: %w", spec.Repo, spec.Branch, errNoWorkloadsDir)
}

// warnOtherEnvironments says when the workloads have deployment targets, none for this environment.
func warnOtherEnvironments(w io.Writer, snap *scheduling.Snapshot) {
	if len(snap.Targets) > 0 {
		return
	}
	seen := map[string]bool{}
	for _, wl := range snap.Workloads {
		for _, t := range wl.Spec.DeploymentTargets {
			seen[t.Environment] = true
		}
	}
	if len(seen) == 0 {
		return
	}
	others := make([]string, 0, len(seen))
	for e := range seen {
		others = append(others, e)
	}
	sort.Strings(others)
	fmt.Fprintf(w, "kalypso: warning: no deployment target is for environment %s; the workloads' deployment targets are for %s\n",
		snap.Environment, strings.Join(others, ", "))
}
