package sample

import (
	"fmt"
	"io/fs"
	"regexp"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
)

// The sample's repositories, as its registrations and GitOpsRepos name them.
const (
	Owner        = "microsoft"
	ControlPlane = "kalypso-control-plane"
	WorkloadRepo = "kalypso-svc-src"
	GitOpsRepo   = "kalypso-gitops"
)

// Seeded tells what Seed created.
type Seeded struct {
	Installation int64
	MainSHA      string // the control plane's main commit that the environments pin
}

var pin = regexp.MustCompile(`commit: [0-9a-f]+`)

// Seed creates the sample's control-plane, workload and GitOps repositories in a simulated
// GitHub, with the environments pinned to the new main commit and the GitOps branches as they
// were last merged.
func Seed(sim *githubsim.Server, account string) (*Seeded, error) {
	inst := sim.CreateInstallation(account)
	for _, name := range []string{ControlPlane, WorkloadRepo, GitOpsRepo} {
		if err := sim.CreateRepo(inst, Owner, name, "main"); err != nil {
			return nil, err
		}
	}
	if _, err := commitFS(sim, WorkloadRepo, "main", FS("workload-sources/microsoft/kalypso-svc-src/main"), nil, "Workload definitions"); err != nil {
		return nil, err
	}
	mainSHA, err := commitFS(sim, ControlPlane, "main", FS("main"), nil, "Templates, workloads and environments")
	if err != nil {
		return nil, err
	}
	mainFiles, err := files(FS("main"))
	if err != nil {
		return nil, err
	}
	for _, env := range Environments() {
		edit := func(p string, c string) string {
			if p == "base-repo.yaml" {
				return pin.ReplaceAllString(c, "commit: "+mainSHA)
			}
			return c
		}
		if _, err := commitFS(sim, ControlPlane, env, FS(env), without(mainFiles, edit), "Environment "+env); err != nil {
			return nil, err
		}
	}
	readme := "Platform GitOps repository"
	if _, err := sim.CommitFiles(Owner, GitOpsRepo, "main", map[string]*string{"README.md": &readme}, "Start"); err != nil {
		return nil, err
	}
	for _, env := range Environments() {
		if _, err := commitFS(sim, GitOpsRepo, env, FS("gitops/"+env), without(map[string]string{"README.md": ""}, nil), "Manifests of "+env); err != nil {
			return nil, err
		}
	}
	return &Seeded{Installation: inst, MainSHA: mainSHA}, nil
}

// without makes a change set that deletes the given files (the branch starts as a copy of the
// default branch) and rewrites the new ones with edit.
func without(old map[string]string, edit func(path, content string) string) func(map[string]string) map[string]*string {
	return func(next map[string]string) map[string]*string {
		out := map[string]*string{}
		for p := range old {
			out[p] = nil
		}
		for p, c := range next {
			if edit != nil {
				c = edit(p, c)
			}
			out[p] = &c
		}
		return out
	}
}

// commitFS commits every file of fsys on a branch.
func commitFS(sim *githubsim.Server, repo, branch string, fsys fs.FS, change func(map[string]string) map[string]*string, msg string) (string, error) {
	fl, err := files(fsys)
	if err != nil {
		return "", err
	}
	var set map[string]*string
	if change != nil {
		set = change(fl)
	} else {
		set = map[string]*string{}
		for p, c := range fl {
			set[p] = &c
		}
	}
	sha, err := sim.CommitFiles(Owner, repo, branch, set, msg)
	if err != nil {
		return "", fmt.Errorf("seed %s/%s %s: %w", Owner, repo, branch, err)
	}
	return sha, nil
}

// files reads every file of fsys.
func files(fsys fs.FS) (map[string]string, error) {
	out := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		out[p] = string(data)
		return err
	})
	return out, err
}
