package sample

import (
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/githubsim"
)

// AppPullRequests returns the app's open pull requests on the sample's GitOps repository:
// those from a branch kalypso/<environment>.
func AppPullRequests(sim *githubsim.Server) []*github.PullRequest {
	var out []*github.PullRequest
	for _, pr := range sim.PullRequests(Owner, GitOpsRepo) {
		if pr.GetState() == "open" && strings.HasPrefix(pr.GetHead().GetRef(), envref.BranchPrefix) {
			out = append(out, pr)
		}
	}
	return out
}
