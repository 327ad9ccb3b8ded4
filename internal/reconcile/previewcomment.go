package reconcile

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"

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
// its head commit: created the first time, edited in place after. Only a comment of a bot
// that starts with the marker is taken for the app's own, so that nobody's comment is edited.
func (r *Reconciler) CommentPreviews(ctx context.Context, pr PullRequest, lines []PreviewLine) error {
	gh, err := r.clients.Client(ctx, pr.Installation)
	if err != nil {
		return err
	}
	body := previewComment(pr, lines)
	unlock := r.lockReports(pr.Repo, fmt.Sprintf("comment\x00%d", pr.Number))
	defer unlock()
	comments, err := gh.Comments(ctx, pr.Repo, pr.Number)
	if err != nil {
		return fmt.Errorf("comments of %s#%d: %w", pr.Repo, pr.Number, err)
	}
	if own := ownComment(comments); own != nil {
		if own.GetBody() == body {
			return nil
		}
		return gh.EditComment(ctx, pr.Repo, own.GetID(), body)
	}
	_, err = gh.CreateComment(ctx, pr.Repo, pr.Number, body)
	return err
}

func ownComment(comments []*github.IssueComment) *github.IssueComment {
	for _, c := range comments {
		if c.GetUser().GetType() == "Bot" && strings.HasPrefix(c.GetBody(), previewMarker) {
			return c
		}
	}
	return nil
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
