package reconcile

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/ghfake"
)

func TestCommentPreviewsIsOneCommentEditedInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := ghfake.New()
	r := New(nil, ghfake.Installations{GitHub: g})
	pr := PullRequest{Installation: 1, Repo: samplePlane, Number: 5, HeadSHA: strings.Repeat("1", 40), Base: "main"}
	g.AddComment(samplePlane, 5, "mallory", previewMarker+" a person quoting the marker")

	lines := []PreviewLine{{Env: "dev", Conclusion: "success", Title: "dev: 1 added, 0 changed, 0 removed", URL: "https://x/runs/1"},
		{Env: "stage", Conclusion: "neutral", Title: "stage: no change", URL: "https://x/runs/2"}}
	require.NoError(t, r.CommentPreviews(ctx, pr, lines))
	require.NoError(t, r.CommentPreviews(ctx, pr, lines))
	require.Equal(t, []string{"Comments", "CreateComment", "Comments"}, g.Methods(), "the same text is not written again")

	pr.HeadSHA = strings.Repeat("2", 40)
	lines[1] = PreviewLine{Env: "stage", Conclusion: "failure", Title: "1 error in stage", URL: "https://x/runs/3"}
	require.NoError(t, r.CommentPreviews(ctx, pr, lines))
	comments := g.CommentsOn(samplePlane, 5)
	require.Len(t, comments, 2, "the human's comment and the app's one")
	require.Equal(t, previewMarker+"\n**Kalypso preview** of 2222222: 2 environments.\n\n| environment | result |\n|---|---|\n"+
		"| dev | ✅ [dev: 1 added, 0 changed, 0 removed](https://x/runs/1) |\n| stage | ❌ [1 error in stage](https://x/runs/3) |\n", comments[1])
}
