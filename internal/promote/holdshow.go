package promote

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/ellipsis"
	"github.com/kalypso-gitops/kalypso/internal/envcheck"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/store"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// holdAround returns the hold that stops the automatic promotion into s, of its environment
// or of its upstream, and whether there is one.
func (p *Promoter) holdAround(ctx context.Context, l Locator, s *scheduling.Stage) (store.Hold, bool, error) {
	if p.holds == nil {
		return store.Hold{}, false, nil
	}
	for _, env := range []string{s.Env.Name, s.After} {
		if env == "" {
			continue
		}
		h, held, err := p.holds.HoldOf(ctx, l.ControlPlane.String(), env)
		if err != nil || held {
			if held {
				logger(ctx).Info().Str("environment", s.Env.Name).Str("held", env).Str("main", l.Commit).Msg("not promoted automatically: held")
			}
			return h, held, err
		}
	}
	return store.Hold{}, false, nil
}

// maxSummary bounds a check run's summary below GitHub's 65,535 characters.
const maxSummary = 65000

// holdParagraph describes a hold on the `Kalypso / <env>` check run of a commit; what says
// what it does to that commit.
func holdParagraph(h store.Hold, what string) string {
	return fmt.Sprintf("**%s is held** by @%s: %s. %s No automatic promotion goes into or out of %s until a user with write permission "+
		"releases it (`kalypso rollback --release --reason …`, or `POST /api/v1/release`).", h.Environment, h.By, h.Reason, what, h.Environment)
}

// heldOutWhat says what a hold does to a main commit it keeps out of env.
func heldOutWhat(h store.Hold, env, commit string) string {
	if h.Environment == env {
		return fmt.Sprintf("Main %s is not promoted to %s automatically; a release promotes main's newest commit.", short(commit), env)
	}
	return fmt.Sprintf("Main %s is not promoted to %s automatically until %s is released.", short(commit), env, h.Environment)
}

// heldAtWhat says what a hold does to the commit it pinned back.
func heldAtWhat(env, commit string) string {
	return fmt.Sprintf("%s pins main %s back, and keeps it until the release.", env, short(commit))
}

// showHold shows hold h on the `Kalypso / <env>` check run of l's commit (none: nothing to
// show it on), unless it shows it already.
func (p *Promoter) showHold(ctx context.Context, l Locator, h store.Hold, what string) error {
	return p.editEnvRun(ctx, l, func(c envcheck.Content) envcheck.Content {
		return envcheck.WithHold(c, holdParagraph(h, what))
	})
}

// unshowHold takes the hold away from the `Kalypso / <env>` check run of l's commit, if it
// shows one: the check run says again what the reconciler reported.
func (p *Promoter) unshowHold(ctx context.Context, l Locator) error {
	return p.editEnvRun(ctx, l, func(c envcheck.Content) envcheck.Content {
		c, _ = envcheck.WithoutHold(c)
		return c
	})
}

// editEnvRun rewrites the conclusion, title and summary of the `Kalypso / <env>` check run of
// l's commit with edit, when that changes them; its text, annotations and buttons stay.
func (p *Promoter) editEnvRun(ctx context.Context, l Locator, edit func(envcheck.Content) envcheck.Content) error {
	gh, err := p.clients.Client(ctx, l.Installation)
	if err != nil {
		return err
	}
	run, err := ghport.FindCheckRun(ctx, gh, l.ControlPlane, l.Commit, envcheck.Name(l.Env), envcheck.ExternalID(l.ControlPlane, l.Env))
	if err != nil || run == nil || run.GetStatus() != "completed" {
		return err
	}
	have := envcheck.Content{Conclusion: run.GetConclusion(), Title: run.GetOutput().GetTitle(), Summary: run.GetOutput().GetSummary()}
	want := edit(have)
	want.Summary = ellipsis.Cut(want.Summary, maxSummary)
	if want == have {
		return nil
	}
	out := &github.CheckRunOutput{Title: github.String(want.Title), Summary: github.String(want.Summary)}
	if run.GetOutput().Text != nil {
		out.Text = run.GetOutput().Text
	}
	_, err = gh.UpdateCheckRun(ctx, l.ControlPlane, run.GetID(), github.UpdateCheckRunOptions{
		Name: run.GetName(), Status: github.String("completed"), Conclusion: github.String(want.Conclusion), Output: out})
	if err != nil {
		return fmt.Errorf("check run %s on %s: %w", envcheck.Name(l.Env), short(l.Commit), err)
	}
	return nil
}
