package githubsim

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-github/v62/github"
)

// FluxUser is the login the simulated cluster posts statuses as.
const FluxUser = "flux-notifier"

// CheckRuns returns every check run on a commit, newest first.
func (s *Server) CheckRuns(owner, repoName, sha string) []*github.CheckRun {
	var out []*github.CheckRun
	_ = s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		for _, cr := range rp.runsFor(plumbing.NewHash(sha), "", "", false) {
			out = append(out, fromMap[github.CheckRun](s.checkRunMap(rp, cr)))
		}
		return nil, nil
	})
	return out
}

// CheckRunDetails returns a check run's annotations and action buttons.
func (s *Server) CheckRunDetails(checkRunID int64) ([]*github.CheckRunAnnotation, []*github.CheckRunAction, error) {
	var anns []*github.CheckRunAnnotation
	var acts []*github.CheckRunAction
	err := s.withCheckRun(checkRunID, func(rp *repo, cr *checkRun) ([]*hookEvent, error) {
		anns = slices.Clone(cr.annotations)
		acts = slices.Clone(cr.actions)
		return nil, nil
	})
	return anns, acts, err
}

// withCheckRun finds a check run in any repository and runs fn with its repo locked.
func (s *Server) withCheckRun(id int64, fn func(*repo, *checkRun) ([]*hookEvent, error)) error {
	s.mu.Lock()
	repos := make([]*repo, 0, len(s.repos))
	for _, rp := range s.repos {
		repos = append(repos, rp)
	}
	s.mu.Unlock()
	for _, rp := range repos {
		rp.mu.Lock()
		idx := slices.IndexFunc(rp.checkRuns, func(cr *checkRun) bool { return cr.id == id })
		if idx < 0 {
			rp.mu.Unlock()
			continue
		}
		events, err := fn(rp, rp.checkRuns[idx])
		rp.mu.Unlock()
		s.hooks.deliver(events)
		return err
	}
	return fmt.Errorf("githubsim: no check run %d", id)
}

// RerequestCheckRun is a user pressing "Re-run": it sends check_run
// rerequested and leaves the run unchanged, as GitHub does.
func (s *Server) RerequestCheckRun(checkRunID int64, user string) error {
	return s.withCheckRun(checkRunID, func(rp *repo, cr *checkRun) ([]*hookEvent, error) {
		return []*hookEvent{s.checkRunEvent(rp, cr, "rerequested", user, "")}, nil
	})
}

// ClickCheckRunAction is a user pressing one of a completed run's buttons:
// it sends check_run requested_action with the button's identifier.
func (s *Server) ClickCheckRunAction(checkRunID int64, identifier, user string) error {
	return s.withCheckRun(checkRunID, func(rp *repo, cr *checkRun) ([]*hookEvent, error) {
		if cr.status != "completed" {
			return nil, errors.New("githubsim: buttons are shown only on completed check runs")
		}
		if !slices.ContainsFunc(cr.actions, func(a *github.CheckRunAction) bool { return a.Identifier == identifier }) {
			return nil, fmt.Errorf("githubsim: check run %d has no action %q", checkRunID, identifier)
		}
		return []*hookEvent{s.checkRunEvent(rp, cr, "requested_action", user, identifier)}, nil
	})
}

// Statuses returns every commit status on a commit, newest first.
func (s *Server) Statuses(owner, repoName, sha string) []*github.RepoStatus {
	var out []*github.RepoStatus
	_ = s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		for _, st := range rp.statusesFor(sha) {
			out = append(out, fromMap[github.RepoStatus](s.statusMap(rp, st)))
		}
		return nil, nil
	})
	return out
}

// PostStatus posts a commit status as a cluster's notification controller
// would (Flux posts success or failure, never pending) and sends a status webhook.
func (s *Server) PostStatus(owner, repoName, sha, state, context, description string) error {
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		st, err := s.addStatus(rp, sha, statusInput{State: state, Context: context, Description: description}, FluxUser)
		if err != nil {
			return nil, err
		}
		return []*hookEvent{s.statusEvent(rp, st, FluxUser)}, nil
	})
	if err != nil {
		return fmt.Errorf("githubsim: post status: %w", err)
	}
	return nil
}

// FluxStatusContext returns Flux's default status context:
// lower("<kind>/<name>/<first dash-separated part of the Provider UID>").
func FluxStatusContext(kind, name, providerUID string) string {
	id, _, _ := strings.Cut(providerUID, "-")
	return strings.ToLower(kind + "/" + name + "/" + id)
}

// Deployments returns every deployment of a repository, newest first.
func (s *Server) Deployments(owner, repoName string) []*github.Deployment {
	var out []*github.Deployment
	_ = s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		for i := len(rp.deployments) - 1; i >= 0; i-- {
			out = append(out, fromMap[github.Deployment](s.deploymentMap(rp, rp.deployments[i])))
		}
		return nil, nil
	})
	return out
}

// PostDeployment records a deployment of ref to environment with one
// status, as Argo CD notifications do, and returns the deployment ID.
func (s *Server) PostDeployment(owner, repoName, ref, environment, state, description string) (int64, error) {
	var id int64
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		if !slices.Contains(deploymentStates, state) {
			return nil, fmt.Errorf("unknown deployment state %q", state)
		}
		d, err := s.addDeployment(rp, deploymentInput{Ref: ref, Environment: environment, Description: description}, "argocd")
		if err != nil {
			return nil, err
		}
		id = d.id
		d.statuses = append(d.statuses, &deploymentStatus{
			id: s.nextID(), state: state, description: description, environment: d.environment,
			creator: "argocd", createdAt: s.now(),
		})
		return nil, nil
	})
	if err != nil {
		return 0, fmt.Errorf("githubsim: post deployment: %w", err)
	}
	return id, nil
}

// DeploymentStatuses returns the statuses of a deployment, newest first.
func (s *Server) DeploymentStatuses(owner, repoName string, id int64) []*github.DeploymentStatus {
	var out []*github.DeploymentStatus
	_ = s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		for _, d := range rp.deployments {
			if d.id != id {
				continue
			}
			for i := len(d.statuses) - 1; i >= 0; i-- {
				out = append(out, fromMap[github.DeploymentStatus](s.deploymentStatusMap(rp, d, d.statuses[i])))
			}
		}
		return nil, nil
	})
	return out
}
