package promote

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/ellipsis"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// ensureDeployment creates the GitHub Deployment of this wait, or finds it (after a restart,
// or made by another replica).
func (p *Promoter) ensureDeployment(ctx context.Context, d *deployment) error {
	if found, err := p.findDeployment(ctx, d); err != nil || found {
		return err
	}
	gh, err := p.clients.Client(ctx, d.Installation)
	if err != nil {
		return err
	}
	pl := payload{GitOpsRepo: d.GitOps.String(), GitOpsCommit: d.Merge}
	if d.Stage != nil && d.Stage.Manual {
		run, err := ghport.FindCheckRun(ctx, gh, d.ControlPlane, d.Commit, ApprovalCheckName(d.Env), approvalID(d.Locator))
		if err != nil {
			return err
		}
		pl.Approvers = approvalsOf(run)
	}
	data, _ := json.Marshal(pl)
	dep, err := gh.CreateDeployment(ctx, d.ControlPlane, &github.DeploymentRequest{
		Ref: github.String(d.Commit), Environment: github.String(d.Env), AutoMerge: github.Bool(false),
		RequiredContexts: &[]string{}, Payload: json.RawMessage(data),
		Description: github.String("Kalypso promotes main " + short(d.Commit) + " to " + d.Env)})
	if err != nil {
		return fmt.Errorf("create deployment of %s to %s: %w", short(d.Commit), d.Env, err)
	}
	d.ID, d.Started = dep.GetID(), p.now()
	if t := dep.GetCreatedAt().Time; !t.IsZero() {
		d.Started = t
	}
	return p.deploymentStatus(ctx, d, "in_progress", "waiting for the clusters of "+d.Env)
}

// findDeployment reads the newest Deployment of the wait's commit to its environment: its ID,
// when the wait began (the timeout counts from there) and, when d does not know it, the GitOps
// commit the pull request was merged as. It reports whether there is one.
func (p *Promoter) findDeployment(ctx context.Context, d *deployment) (bool, error) {
	gh, err := p.clients.Client(ctx, d.Installation)
	if err != nil {
		return false, err
	}
	list, _, err := gh.Deployments(ctx, d.ControlPlane, &github.DeploymentsListOptions{SHA: d.Commit, Environment: d.Env,
		ListOptions: github.ListOptions{PerPage: 1}}) // the newest only
	if err != nil {
		return false, fmt.Errorf("deployments of %s: %w", d.ControlPlane, err)
	}
	if len(list) == 0 {
		return false, nil
	}
	dep := list[0]
	var pl payload
	readable := json.Unmarshal(dep.Payload, &pl) == nil && pl.GitOpsRepo == d.GitOps.String()
	if readable && d.Merge != "" && pl.GitOpsCommit != "" && pl.GitOpsCommit != d.Merge {
		return false, nil // an earlier deployment of the same commit (pinned again by a rollback)
	}
	d.ID, d.Started = dep.GetID(), dep.GetCreatedAt().Time
	if d.Merge == "" && readable {
		d.Merge = pl.GitOpsCommit
	}
	return true, nil
}

func (p *Promoter) deploymentStatus(ctx context.Context, d *deployment, state, desc string) error {
	gh, err := p.clients.Client(ctx, d.Installation)
	if err != nil {
		return err
	}
	err = gh.CreateDeploymentStatus(ctx, d.ControlPlane, d.ID, &github.DeploymentStatusRequest{
		State: github.String(state), Description: github.String(ellipsis.Cut(desc, 140)), Environment: github.String(d.Env)})
	if err != nil {
		return fmt.Errorf("deployment status of %s: %w", d.Env, err)
	}
	return nil
}

// endDeployments gives the unfinished Deployments of a main commit to an environment a final
// status, "inactive" with the reason, when another commit replaces it there. It reads every
// page of them, up to promotion.maxDeployments.
func (p *Promoter) endDeployments(ctx context.Context, l Locator, why string) error {
	gh, err := p.clients.Client(ctx, l.Installation)
	if err != nil {
		return err
	}
	err = ghport.EachDeployment(ctx, gh, l.ControlPlane, github.DeploymentsListOptions{SHA: l.Commit, Environment: l.Env},
		func(dep *github.Deployment) (bool, error) {
			latest, err := gh.LatestDeploymentStatus(ctx, l.ControlPlane, dep.GetID())
			if err != nil {
				return false, fmt.Errorf("statuses of deployment %d: %w", dep.GetID(), err)
			}
			if latest != nil && finalDeploymentState(latest.GetState()) {
				return true, nil
			}
			err = gh.CreateDeploymentStatus(ctx, l.ControlPlane, dep.GetID(), &github.DeploymentStatusRequest{
				State: github.String("inactive"), Description: github.String(ellipsis.Cut(why, 140)), Environment: github.String(l.Env)})
			if err != nil {
				return false, fmt.Errorf("end deployment %d: %w", dep.GetID(), err)
			}
			return true, nil
		})
	if err != nil {
		return fmt.Errorf("deployments of %s to %s: %w", short(l.Commit), l.Env, err)
	}
	return nil
}

// finalDeploymentState reports whether a Deployment in this state is over.
func finalDeploymentState(state string) bool {
	switch state {
	case "success", "failure", "error", "inactive":
		return true
	}
	return false
}
