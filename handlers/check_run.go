package handlers

import (
	"context"

	"github.com/google/go-github/v62/github"
	"github.com/palantir/go-githubapp/githubapp"

	"github.com/kalypso-gitops/kalypso/app"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
)

// routeCheckRun names the work a user asked for on a check run: "Re-run" of an environment's
// check (the environment, or main's validation, reported again as a new check run), "Re-run"
// of a preview, and clicks on Promote, Accept and Show full preview. The check runs the app writes are echoes.
func (c *Core) routeCheckRun(ctx context.Context, payload []byte) (bool, error) {
	ev, err := decode[github.CheckRunEvent]("check_run", payload)
	if err != nil {
		return false, err
	}
	if c.checkRunEcho(ev) {
		return true, nil
	}
	inst, repo, run := githubapp.GetInstallationIDFromEvent(ev), repoOf(ev.GetRepo()), ev.GetCheckRun()
	switch ev.GetAction() {
	case "requested_action":
		action := ev.GetRequestedAction().Identifier
		if !ourAction(action) {
			return false, nil
		}
		return false, c.Queue.Add(ctx, ClickKey(inst, repo, run.GetID(), action), Clicks{{User: ev.GetSender().GetLogin(), Run: run, Delivery: app.DeliveryID(ctx)}})
	case "rerequested":
		if _, _, ok := reconcile.ParsePreviewExternalID(run.GetExternalID()); ok {
			return false, c.rerunPreviews(ctx, inst, repo, run)
		}
		plane, env, ok := reconcile.ParseExternalID(run.GetExternalID())
		if !ok {
			return false, nil // not one of ours
		}
		branch := run.GetCheckSuite().GetHeadBranch()
		if repo == plane && branch == gitsource.MainBranch {
			return false, c.Queue.Add(ctx, MainKey(inst, plane), ReportOn(plane, branch, true))
		}
		key := EnvironmentKey(envref.Env{Installation: inst, ControlPlane: plane, Name: env})
		return false, c.Queue.Add(ctx, key, ReportOn(repo, branch, true))
	}
	return false, nil
}

// rerunPreviews previews again the open pull requests of repo a preview check run is for
// (GitHub lists only those of the same repository, not those from forks).
func (c *Core) rerunPreviews(ctx context.Context, inst int64, repo envref.Repo, run *github.CheckRun) error {
	if c.Previews == nil {
		return nil
	}
	for _, pr := range run.PullRequests {
		if pr.GetNumber() <= 0 {
			continue
		}
		if err := c.Queue.Add(ctx, PreviewKey(inst, repo, pr.GetNumber()), nil); err != nil {
			return err
		}
	}
	return nil
}

// ourAction reports whether a button identifier is one of the app's.
func ourAction(action string) bool {
	switch action {
	case promote.PromoteAction, promote.OverrideAction, promote.RollBackAction, reconcile.AcceptAction, reconcile.FullPreviewAction:
		return true
	}
	return false
}
