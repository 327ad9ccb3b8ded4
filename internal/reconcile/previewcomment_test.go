package reconcile

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/ghfake"
)

// botLogin answers the fake's bot login, counting how often it is asked.
func botLogin(asked *int) BotLogin {
	return func(context.Context) (string, error) { *asked++; return ghfake.BotLogin, nil }
}

// commenter returns a reconciler over a fake GitHub that knows the bot's login (counting how
// often it asks), and a pull request of the sample control plane.
func commenter(asked *int) (*Reconciler, *ghfake.GitHub, PullRequest) {
	g := ghfake.New()
	r := New(nil, ghfake.Installations{GitHub: g}, WithBotLogin(botLogin(asked)))
	return r, g, PullRequest{Installation: 1, Repo: samplePlane, Number: 5, HeadSHA: strings.Repeat("1", 40), Base: "main"}
}

func TestCommentPreviewsIsOneCommentEditedInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	asked := 0
	r, g, pr := commenter(&asked)
	g.AddComment(samplePlane, 5, "mallory", previewMarker+" a person quoting the marker")
	g.AddComment(samplePlane, 5, "other-app[bot]", previewMarker+" another App (or a workflow) echoing the marker")

	lines := []PreviewLine{{Env: "dev", Conclusion: "success", Title: "dev: 1 added, 0 changed, 0 removed", URL: "https://x/runs/1"},
		{Env: "stage", Conclusion: "neutral", Title: "stage: no change", URL: "https://x/runs/2"}}
	require.NoError(t, r.CommentPreviews(ctx, pr, lines))
	require.NoError(t, r.CommentPreviews(ctx, pr, lines))
	require.Equal(t, []string{"Comments", "CreateComment", "Comments"}, g.Methods(), "the same text is not written again")

	pr.HeadSHA = strings.Repeat("2", 40)
	lines[1] = PreviewLine{Env: "stage", Conclusion: "failure", Title: "1 error in stage", URL: "https://x/runs/3"}
	require.NoError(t, r.CommentPreviews(ctx, pr, lines))
	comments := g.CommentsOn(samplePlane, 5)
	require.Len(t, comments, 3, "the human's comment, the other App's and the app's one")
	require.Equal(t, previewMarker+" another App (or a workflow) echoing the marker", comments[1], "another App's comment is never edited")
	require.Equal(t, previewMarker+"\n**Kalypso preview** of 2222222: 2 environments.\n\n| environment | result |\n|---|---|\n"+
		"| dev | ✅ [dev: 1 added, 0 changed, 0 removed](https://x/runs/1) |\n| stage | ❌ [1 error in stage](https://x/runs/3) |\n", comments[2])
	require.Equal(t, 1, asked, "the bot login is asked once, then remembered")
}

func TestCommentPreviewsNeedsTheBotLogin(t *testing.T) {
	t.Parallel()
	pr := PullRequest{Installation: 1, Repo: samplePlane, Number: 5, HeadSHA: strings.Repeat("1", 40), Base: "main"}
	g := ghfake.New()
	require.ErrorIs(t, New(nil, ghfake.Installations{GitHub: g}).CommentPreviews(context.Background(), pr, nil), errNoBotLogin)

	boom := errors.New("GET /app: 502")
	failing := New(nil, ghfake.Installations{GitHub: g}, WithBotLogin(func(context.Context) (string, error) { return "", boom }))
	require.ErrorIs(t, failing.CommentPreviews(context.Background(), pr, nil), boom)
	odd := New(nil, ghfake.Installations{GitHub: g}, WithBotLogin(func(context.Context) (string, error) { return "kalypso", nil }))
	require.ErrorContains(t, odd.CommentPreviews(context.Background(), pr, nil), "does not end with [bot]")
	require.Empty(t, g.Methods(), "nothing is read or written without knowing whose comment is the app's")
}

// TestCommentPreviewsFindsItsCommentPastThePage checks that the app's comment is edited, not
// written again, behind more comments than one page holds.
func TestCommentPreviewsFindsItsCommentPastThePage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	asked := 0
	r, g, pr := commenter(&asked)
	for range 150 {
		g.AddComment(samplePlane, 5, "alice", "a review")
	}
	lines := []PreviewLine{{Env: "dev", Conclusion: "success", Title: "dev: no change", URL: "https://x/runs/1"}}
	require.NoError(t, r.CommentPreviews(ctx, pr, lines))
	lines[0].Title = "dev: 1 changed"
	require.NoError(t, r.CommentPreviews(ctx, pr, lines))
	comments := g.CommentsOn(samplePlane, 5)
	require.Len(t, comments, 151, "one comment of the app, edited")
	require.Contains(t, comments[150], "dev: 1 changed")
	require.Equal(t, 1, g.Count("EditComment"))
}
