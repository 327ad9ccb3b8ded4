// Package fleet generates synthetic control planes of any size, in memory, for measuring
// scheduling and rendering. The same Spec always gives the same files.
package fleet

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing/fstest"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Fixed commits and repositories of the generated control plane.
const (
	MainCommit      = "0123456789abcdef0123456789abcdef01234567"
	EnvCommit       = "89abcdef0123456789abcdef0123456789abcdef"
	Owner           = "kalypso-bench"
	ControlPlaneURL = "https://github.com/" + Owner + "/control-plane"
	GitOpsURL       = "https://github.com/" + Owner + "/gitops"
)

//go:embed templates/*.yaml
var templateFiles embed.FS

// Spec sizes a synthetic fleet.
type Spec struct {
	ClusterTypes       int    // cluster types, alternately using the arc-flux and argocd templates
	Workloads          int    // workloads, each with its own registration and repository
	TargetsPerWorkload int    // deployment targets of each workload in Environment
	Configs            int    // platform-config ConfigMaps: one environment-wide, the others by label
	Policies           int    // scheduling policies; together they assign every target to every cluster type
	Environment        string // the environment's name ("dev" when empty)
}

// DefaultSpec is the 100 × 1,000 fleet: 100,000 assignments.
func DefaultSpec() Spec {
	return Spec{ClusterTypes: 100, Workloads: 100, TargetsPerWorkload: 10, Configs: 5, Policies: 4, Environment: "dev"}
}

// Fleet is a generated control plane. Its files may be edited (add, change or delete an entry)
// between calls to scheduling.Load on Inputs; edits are seen by the next load.
type Fleet struct {
	Spec Spec
	// Env is the environment's branch of the control-plane repository.
	Env fstest.MapFS
	// Main is the control-plane repository's main branch at MainCommit.
	Main fstest.MapFS
	// Workloads holds every workload repository as OWNER/REPO/BRANCH/PATH.
	Workloads fstest.MapFS
}

// Generate builds a fleet and returns the inputs of its environment.
func Generate(spec Spec) scheduling.Inputs { return New(spec).Inputs() }

// New builds a fleet.
func New(spec Spec) *Fleet {
	if spec.Environment == "" {
		spec.Environment = "dev"
	}
	f := &Fleet{Spec: spec, Env: fstest.MapFS{}, Main: fstest.MapFS{}, Workloads: fstest.MapFS{}}
	f.addTemplates()
	f.addRepos()
	f.addClusterTypes()
	f.addConfigs()
	f.addPolicies()
	f.addWorkloads()
	return f
}

// Inputs returns the sources of the fleet's environment; they read the fleet's current files.
func (f *Fleet) Inputs() scheduling.Inputs {
	env := f.Spec.Environment
	return scheduling.Inputs{
		Environment: env,
		Env:         scheduling.Source{FS: f.Env, Name: env, Prefix: "control-plane/" + env + "/", Commit: EnvCommit},
		Main:        scheduling.Source{FS: f.Main, Name: "main", Prefix: "control-plane/main/", Commit: MainCommit},
		Workloads:   workloadSource{fleet: f},
	}
}

// Assignments is how many assignments the fleet's policies produce together.
func (f *Fleet) Assignments() int {
	if f.Spec.Policies <= 0 {
		return 0
	}
	return f.Spec.ClusterTypes * f.Spec.Workloads * f.Spec.TargetsPerWorkload
}

func (f *Fleet) addTemplates() {
	entries, err := fs.ReadDir(templateFiles, "templates")
	if err != nil {
		panic(fmt.Sprintf("fleet: embedded templates: %v", err))
	}
	for _, e := range entries {
		data, err := templateFiles.ReadFile("templates/" + e.Name())
		if err != nil {
			panic(fmt.Sprintf("fleet: embedded template %s: %v", e.Name(), err))
		}
		f.Main["templates/"+e.Name()] = file(string(data))
	}
}

func (f *Fleet) addRepos() {
	env := f.Spec.Environment
	f.Env["base-repo.yaml"] = file(fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: BaseRepo
metadata:
  name: main
spec:
  repo: %s
  branch: main
  path: .
  commit: %s
`, ControlPlaneURL, MainCommit))
	f.Env["gitops-repo.yaml"] = file(fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: GitOpsRepo
metadata:
  name: %s
spec:
  repo: %s
  branch: %s
  path: .
`, env, GitOpsURL, env))
}

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s), Mode: 0o644} }

// name numbers the i-th of n things with a fixed width, e.g. name("ct", 7, 100) = "ct-07".
func name(prefix string, i, n int) string {
	width := len(fmt.Sprint(max(n-1, 0)))
	return fmt.Sprintf("%s-%0*d", prefix, width, i)
}

// workloadSource serves the fleet's workload repositories.
type workloadSource struct{ fleet *Fleet }

// Workload implements scheduling.WorkloadSource.
func (w workloadSource) Workload(spec scheduling.ManifestsSpec) (scheduling.Source, error) {
	owner, repo, err := scheduling.RepoSlug(spec.Repo)
	if err != nil {
		return scheduling.Source{}, fmt.Errorf("workload repository: %w", err)
	}
	dir := path.Join(owner, repo, strings.Trim(spec.Branch, "/"))
	if st, err := fs.Stat(w.fleet.Workloads, dir); err != nil || !st.IsDir() {
		return scheduling.Source{}, fmt.Errorf("%s has no branch %q", spec.Repo, spec.Branch)
	}
	sub, err := fs.Sub(w.fleet.Workloads, dir)
	if err != nil {
		return scheduling.Source{}, fmt.Errorf("workload repository %s: %w", dir, err)
	}
	return scheduling.Source{FS: sub, Name: owner + "/" + repo, Prefix: "workloads/" + dir + "/", Commit: MainCommit}, nil
}
