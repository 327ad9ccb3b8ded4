package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/plural"
)

// previewMarker starts the app's one comment on a previewed pull request.
const previewMarker = "<!-- kalypso-preview -->"

// PreviewLine is one environment's line in a pull request's preview comment.
type PreviewLine struct {
	Env        string
	Conclusion string
	Title      string
	URL        string // the check run's page
}

// CommentPreviews keeps the app's one comment on a pull request summing up the previews of
// its head commit: created the first time, edited in place after. Only a comment of the App's
// own bot user that starts with the marker is taken for the app's own: a look-alike comment
// of a person, another App or a workflow is never edited, and never keeps the app from
// commenting.
func (r *Reconciler) CommentPreviews(ctx context.Context, pr PullRequest, lines []PreviewLine) error {
	bot, err := r.bot.login(ctx)
	if err != nil {
		return fmt.Errorf("the App's bot user: %w", err)
	}
	gh, err := r.clients.Client(ctx, pr.Installation)
	if err != nil {
		return err
	}
	body := previewComment(pr, lines)
	unlock := r.lockReports(pr.Repo, fmt.Sprintf("comment\x00%d", pr.Number))
	defer unlock()
	comments, err := ghport.AllComments(ctx, gh, pr.Repo, pr.Number)
	if err != nil {
		return fmt.Errorf("comments of %s#%d: %w", pr.Repo, pr.Number, err)
	}
	if own := ownComment(comments, bot); own != nil {
		if own.GetBody() == body {
			return nil
		}
		return gh.EditComment(ctx, pr.Repo, own.GetID(), body)
	}
	_, err = gh.CreateComment(ctx, pr.Repo, pr.Number, body)
	return err
}

// ownComment returns the first comment of the App's bot user that starts with the marker.
func ownComment(comments []*github.IssueComment, bot string) *github.IssueComment {
	for _, c := range comments {
		if strings.EqualFold(c.GetUser().GetLogin(), bot) && strings.HasPrefix(c.GetBody(), previewMarker) {
			return c
		}
	}
	return nil
}

// BotLogin tells the login of the App's bot user, "<slug>[bot]" (the slug comes from GET /app).
type BotLogin func(ctx context.Context) (string, error)

// WithBotLogin tells the reconciler how to learn the login of the App's bot user, by which it
// recognises its own comments. It is asked until it answers, then remembered.
func WithBotLogin(f BotLogin) Option {
	return func(r *Reconciler) { r.bot.ask = f }
}

// botUser remembers the App's bot login once known.
type botUser struct {
	mu    sync.Mutex
	ask   BotLogin
	known string
}

var errNoBotLogin = errors.New("the App's bot login is not configured (reconcile.WithBotLogin)")

func (b *botUser) login(ctx context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.known != "" {
		return b.known, nil
	}
	if b.ask == nil {
		return "", errNoBotLogin
	}
	login, err := b.ask(ctx)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(login, "[bot]") || len(login) <= len("[bot]") {
		return "", fmt.Errorf("the App's bot login %q does not end with [bot]", login)
	}
	b.known = login
	return login, nil
}

var conclusionMark = map[string]string{"success": "✅", "neutral": "⚪", "failure": "❌"}

func previewComment(pr PullRequest, lines []PreviewLine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n**Kalypso preview** of %s: %s.\n\n| environment | result |\n|---|---|\n",
		previewMarker, pr.HeadSHA[:min(7, len(pr.HeadSHA))], plural.Count(len(lines), "environment"))
	for _, l := range lines {
		fmt.Fprintf(&b, "| %s | %s [%s](%s) |\n", l.Env, conclusionMark[l.Conclusion], l.Title, l.URL)
	}
	return b.String()
}
