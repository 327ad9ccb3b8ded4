package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// workClicks handles the clicks on one button of a check run, oldest first: Promote promotes
// (see promote.Promoter.Approve), Accept records an acceptance of a held change and makes the
// environment reconcile so that the change reaches its GitOps pull request, Show full preview
// records an approval and previews the pull request again. Each click reads
// the check run as GitHub has it now, so that a click counts once.
func (c *Core) workClicks(ctx context.Context, key workq.Key, clicks Clicks) error {
	inst, repo := key.Inst, repoOfKey(key)
	_, action, _ := strings.Cut(key.Name, "/")
	var errs []error
	for _, click := range clicks {
		ctx := audit.WithDelivery(ctx, click.Delivery)
		switch action {
		case promote.PromoteAction:
			errs = append(errs, c.Promoter.Approve(ctx, inst, repo, click.Run, click.User))
		case promote.OverrideAction:
			errs = append(errs, c.Promoter.Override(ctx, inst, repo, click.Run, click.User))
		case promote.RollBackAction:
			errs = append(errs, c.Promoter.RollBackClick(ctx, inst, repo, click.Run, click.User))
		case reconcile.FullPreviewAction:
			errs = append(errs, c.showFullPreview(ctx, inst, repo, click))
		default:
			errs = append(errs, c.accept(ctx, inst, repo, click))
		}
	}
	return errors.Join(errs...)
}

// accept records a click on Accept; an accepted environment check is reconciled again, so
// that the held change now reaches the GitOps pull request.
func (c *Core) accept(ctx context.Context, inst int64, repo envref.Repo, click Click) error {
	if c.Previews == nil {
		return nil
	}
	a, err := c.Previews.AcceptBlastRadius(ctx, inst, repo, click.Run, click.User)
	if err != nil || a == nil {
		return err
	}
	if a.Refusal != "" {
		zerolog.Ctx(ctx).Warn().Str("environment", a.Env.Name).Str("user", click.User).Msg("blast radius acceptance refused: " + a.Refusal)
		c.record(ctx, audit.KindRefusal, a.Env, click.User, "blast radius acceptance refused: "+a.Refusal)
	}
	if a.Accepted {
		c.record(ctx, audit.KindAcceptance, a.Env, click.User, fmt.Sprintf("blast radius accepted on check run %d", click.Run.GetID()))
	}
	if !a.Accepted || a.Preview {
		return nil
	}
	return c.Queue.Add(ctx, EnvironmentKey(a.Env), ReportOn(repo, click.Run.GetCheckSuite().GetHeadBranch(), false))
}

// showFullPreview records a click on "Show full preview"; an approved one previews the pull
// request the check run was written for again, in full.
func (c *Core) showFullPreview(ctx context.Context, inst int64, repo envref.Repo, click Click) error {
	if c.Previews == nil {
		return nil
	}
	a, err := c.Previews.ApproveFullPreview(ctx, inst, repo, click.Run, click.User)
	if err != nil || a == nil {
		return err
	}
	if a.Refusal != "" {
		zerolog.Ctx(ctx).Warn().Str("environment", a.Env.Name).Str("user", click.User).Msg("full preview refused: " + a.Refusal)
	}
	if !a.Approved || a.Number <= 0 {
		return nil
	}
	return c.Queue.Add(ctx, PreviewKey(inst, repo, a.Number), nil)
}

// record appends a decision about env to the audit trail, when the app keeps one.
func (c *Core) record(ctx context.Context, kind string, env envref.Env, actor, reason string) {
	if c.Audit == nil {
		return
	}
	r := audit.Record{Actor: actor, ControlPlane: env.ControlPlane.String(), Environment: env.Name, Reason: reason}
	if err := audit.Append(ctx, c.Audit, kind, r); err != nil {
		zerolog.Ctx(ctx).Error().Err(err).Str("kind", kind).Msg("recording a decision in the audit trail")
	}
}
