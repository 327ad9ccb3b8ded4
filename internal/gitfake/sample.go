package gitfake

import (
	"regexp"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// The sample's repositories.
var (
	SamplePlane    = envref.Repo{Owner: sample.Owner, Name: sample.ControlPlane}
	SampleWorkload = envref.Repo{Owner: sample.Owner, Name: sample.WorkloadRepo}
	SampleGitOps   = envref.Repo{Owner: sample.Owner, Name: sample.GitOpsRepo}
)

var pinLine = regexp.MustCompile(`commit: [0-9a-f]+`)

// SeedSample commits the public Kalypso sample: its workload repository, its control plane
// with the environments pinned to the new main commit, and its GitOps branches as they were
// last merged. It returns the main commit.
func (r *Remotes) SeedSample() string {
	r.t.Helper()
	r.CommitFS(SampleWorkload, "main", sample.FS("workload-sources/microsoft/kalypso-svc-src/main"), nil, "Workloads")
	main := r.CommitFS(SamplePlane, "main", sample.FS("main"), nil, "Main")
	for _, env := range sample.Environments() {
		pin := func(p, c string) string {
			if p == "base-repo.yaml" {
				return pinLine.ReplaceAllString(c, "commit: "+main)
			}
			return c
		}
		r.CommitFS(SamplePlane, env, sample.FS(env), pin, "Environment "+env)
		r.CommitFS(SampleGitOps, env, sample.FS("gitops/"+env), nil, "Manifests of "+env)
	}
	return main
}
