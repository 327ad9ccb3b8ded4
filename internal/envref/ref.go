// Package envref is the vocabulary the orchestration layers share: repositories, environments,
// what is known of an environment (where it reads from and writes to), and the index of the
// control planes of each installation.
package envref

import "github.com/kalypso-gitops/kalypso/scheduling"

// BranchPrefix starts the name of the app's branch of each environment: `kalypso/<environment>`.
const BranchPrefix = "kalypso/"

// AppBranch is the app's branch of an environment in its GitOps repository.
func AppBranch(env string) string { return BranchPrefix + env }

// Repo names a repository.
type Repo struct {
	Owner, Name string
}

// String formats the repository as owner/name.
func (r Repo) String() string { return r.Owner + "/" + r.Name }

// RepoOf reads the repository of a clone URL (https://HOST/OWNER/NAME).
func RepoOf(url string) (Repo, error) {
	owner, name, err := scheduling.RepoSlug(url)
	return Repo{Owner: owner, Name: name}, err
}

// Env identifies one environment of one control plane in one installation.
type Env struct {
	Installation int64
	ControlPlane Repo
	Name         string
}

// Key identifies the environment within its installation: control plane and name.
func (e Env) Key() string { return e.ControlPlane.String() + "/" + e.Name }

// EnvInfo is what the index knows of an environment: where it reads from and writes to.
type EnvInfo struct {
	Env          Env
	Branch       string // the control-plane branch of the environment
	GitOps       Repo
	GitOpsBranch string
	GitOpsPath   string // the folder the environment's manifests are written below
	Workloads    []RepoBranch
}

// ReadsWorkload reports whether the environment reads a branch of a workload repository.
func (e EnvInfo) ReadsWorkload(repo Repo, branch string) bool {
	for _, w := range e.Workloads {
		if w.Repo == repo && w.Branch == branch {
			return true
		}
	}
	return false
}

// RepoBranch is a branch of a repository.
type RepoBranch struct {
	Repo   Repo
	Branch string
}
