package promote

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/reconcile"
)

// ensureDeployment creates the GitHub Deployment of this wait, or finds it after a restart.
func (p *Promoter) ensureDeployment(ctx context.Context, d *deployment) error {
	gh, err := p.clients.Client(ctx, d.Inst)
	if err != nil {
		return err
	}
	env := d.Stage.Env.Name
	list, _, err := gh.Repositories.ListDeployments(ctx, d.CP.Owner, d.CP.Name, &github.DeploymentsListOptions{SHA: d.Main, Environment: env})
	if err != nil {
		return fmt.Errorf("deployments of %s: %w", d.CP, err)
	}
	if len(list) > 0 {
		d.ID = list[0].GetID()
		return nil
	}
	data, _ := json.Marshal(payload{GitOpsRepo: d.GitOps.String(), GitOpsCommit: d.Merge})
	dep, _, err := gh.Repositories.CreateDeployment(ctx, d.CP.Owner, d.CP.Name, &github.DeploymentRequest{
		Ref: github.String(d.Main), Environment: github.String(env), AutoMerge: github.Bool(false),
		RequiredContexts: &[]string{}, Payload: json.RawMessage(data),
		Description: github.String("Kalypso promotes main " + short(d.Main) + " to " + env)})
	if err != nil {
		return fmt.Errorf("create deployment of %s to %s: %w", short(d.Main), env, err)
	}
	d.ID = dep.GetID()
	return p.deploymentStatus(ctx, d, "in_progress", "waiting for the clusters of "+env)
}

func (p *Promoter) deploymentStatus(ctx context.Context, d *deployment, state, desc string) error {
	gh, err := p.clients.Client(ctx, d.Inst)
	if err != nil {
		return err
	}
	_, _, err = gh.Repositories.CreateDeploymentStatus(ctx, d.CP.Owner, d.CP.Name, d.ID, &github.DeploymentStatusRequest{
		State: github.String(state), Description: github.String(truncate(desc, 140)), Environment: github.String(d.Stage.Env.Name)})
	if err != nil {
		return fmt.Errorf("deployment status of %s: %w", d.Stage.Env.Name, err)
	}
	return nil
}

// endDeployments gives the unfinished Deployments of a main commit to env a final status,
// "inactive" with the reason, when another commit replaces it there.
func (p *Promoter) endDeployments(ctx context.Context, inst int64, cp reconcile.Repo, env, sha, why string) error {
	gh, err := p.clients.Client(ctx, inst)
	if err != nil {
		return err
	}
	list, _, err := gh.Repositories.ListDeployments(ctx, cp.Owner, cp.Name, &github.DeploymentsListOptions{SHA: sha, Environment: env})
	if err != nil {
		return fmt.Errorf("deployments of %s to %s: %w", short(sha), env, err)
	}
	for _, dep := range list {
		statuses, _, err := gh.Repositories.ListDeploymentStatuses(ctx, cp.Owner, cp.Name, dep.GetID(), &github.ListOptions{PerPage: 1})
		if err != nil {
			return fmt.Errorf("statuses of deployment %d: %w", dep.GetID(), err)
		}
		if len(statuses) > 0 && finalDeploymentState(statuses[0].GetState()) {
			continue
		}
		_, _, err = gh.Repositories.CreateDeploymentStatus(ctx, cp.Owner, cp.Name, dep.GetID(), &github.DeploymentStatusRequest{
			State: github.String("inactive"), Description: github.String(truncate(why, 140)), Environment: github.String(env)})
		if err != nil {
			return fmt.Errorf("end deployment %d: %w", dep.GetID(), err)
		}
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
