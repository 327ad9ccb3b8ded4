package gitsource

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Cloner reads registered workload repositories by cloning their branch into memory.
type Cloner struct {
	token string
}

// NewCloner returns a Cloner that authenticates with token when it is not empty.
func NewCloner(token string) *Cloner { return &Cloner{token: token} }

// Workload implements scheduling.WorkloadSource.
func (c *Cloner) Workload(spec scheduling.ManifestsSpec) (scheduling.Source, error) {
	opts := &git.CloneOptions{
		URL:           spec.Repo,
		ReferenceName: plumbing.NewBranchReferenceName(spec.Branch),
		SingleBranch:  true,
		Depth:         1,
	}
	if c.token != "" {
		opts.Auth = &http.BasicAuth{Username: "x-access-token", Password: c.token}
	}
	repo, err := git.CloneContext(context.Background(), memory.NewStorage(), nil, opts)
	if err != nil {
		return scheduling.Source{}, fmt.Errorf("clone %s branch %s: %w", spec.Repo, spec.Branch, err)
	}
	head, err := repo.Head()
	if err != nil {
		return scheduling.Source{}, fmt.Errorf("clone %s branch %s: %w", spec.Repo, spec.Branch, err)
	}
	fsys, err := TreeFS(repo, head.Hash())
	if err != nil {
		return scheduling.Source{}, err
	}
	return scheduling.Source{FS: fsys, Name: spec.Repo, Prefix: spec.Repo + "@" + spec.Branch + ":", Commit: head.Hash().String()}, nil
}
