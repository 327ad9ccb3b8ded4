package reconcile

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
)

// HeadRead returns the commit this reconcile read of a branch of a repository (the
// environment branch, main, or a registered workload branch), and false when it read no such
// branch. Check runs go on it: the newest head when the reconcile began.
func (o *Outcome) HeadRead(repo envref.Repo, branch string) (string, bool) {
	for _, s := range o.Sources {
		src, srcBranch := o.Env.ControlPlane, s.Branch
		if s.Repo != "" {
			r, err := envref.RepoOf(s.Repo)
			if err != nil {
				continue
			}
			src = r
		} else {
			srcBranch = s.Name // the environment branch is named by its branch
		}
		if src == repo && srcBranch == branch && s.Commit != "" {
			return s.Commit, true
		}
	}
	return "", false
}

// MainHead fetches main of a control plane and returns its head commit.
func (r *Reconciler) MainHead(ctx context.Context, inst int64, cp envref.Repo) (string, error) {
	token, err := r.clients.Token(ctx, inst)
	if err != nil {
		return "", fmt.Errorf("installation %d token: %w", inst, err)
	}
	var head string
	err = r.cache.Use(ctx, gitcache.Remote{Owner: cp.Owner, Name: cp.Name, Token: token}, []string{gitsource.MainBranch}, func(s *gitcache.Session) error {
		if h := s.Head(gitsource.MainBranch); !h.IsZero() {
			head = h.String()
		}
		return nil
	})
	return head, err
}

// CachedHead returns the head of a branch as the git cache last fetched it ("" when unknown),
// without fetching: where to report a reconcile that could not read its inputs.
func (r *Reconciler) CachedHead(repo envref.Repo, branch string) string {
	var head string
	_ = r.cache.UseCached(gitcache.Remote{Owner: repo.Owner, Name: repo.Name}, func(s *gitcache.Session) error {
		if h := s.Head(branch); !h.IsZero() {
			head = h.String()
		}
		return nil
	})
	return head
}

// PullRequest reads a pull request as GitHub has it now: its head, base, author and state.
func (r *Reconciler) PullRequest(ctx context.Context, inst int64, repo envref.Repo, number int) (*github.PullRequest, error) {
	gh, err := r.clients.Client(ctx, inst)
	if err != nil {
		return nil, err
	}
	pr, err := gh.PullRequest(ctx, repo, number)
	if err != nil {
		return nil, fmt.Errorf("pull request #%d of %s: %w", number, repo, err)
	}
	return pr, nil
}
