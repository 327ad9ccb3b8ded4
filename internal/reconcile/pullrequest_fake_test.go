package reconcile

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghfake"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// openPR puts an open pull request of the app's branch into the fake, as GitHub has it.
func openPR(g *ghfake.GitHub, number int, title, body string, labels ...string) {
	pr := &github.PullRequest{Number: github.Int(number), State: github.String("open"), Title: &title, Body: &body,
		Head: &github.PullRequestBranch{Ref: github.String("kalypso/dev")}, Base: &github.PullRequestBranch{Ref: github.String("dev")}}
	for _, l := range labels {
		pr.Labels = append(pr.Labels, &github.Label{Name: github.String(l)})
	}
	g.Pulls[gitopsR] = append(g.Pulls[gitopsR], pr)
}

func proposal(promoted bool) *Outcome {
	out := outcome(1)
	out.Sources = []scheduling.SourceCommit{{Name: "main", Commit: "m1"}, {Name: "dev", Commit: "d1"}}
	out.Plan = render.GroupChanges([]render.Change{{Path: "large/a/namespace.yaml", Kind: render.Added}}, "")
	out.Promoted = promoted
	return out
}

func TestEnsurePullRequest(t *testing.T) {
	want := proposal(false)
	title, body := prTitle(want), prBody(want)
	cases := map[string]struct {
		setup    func(g *ghfake.GitHub)
		promoted bool
		methods  []string
	}{
		"opens it":                         {func(*ghfake.GitHub) {}, false, []string{"OpenPullRequests", "CreatePullRequest"}},
		"opens it with the promoted label": {func(*ghfake.GitHub) {}, true, []string{"OpenPullRequests", "CreatePullRequest", "AddLabels"}},
		"leaves an up-to-date one alone":   {func(g *ghfake.GitHub) { openPR(g, 4, title, body) }, false, []string{"OpenPullRequests"}},
		"labels it once":                   {func(g *ghfake.GitHub) { openPR(g, 4, title, body, PromotedLabel) }, true, []string{"OpenPullRequests"}},
		"updates it in place":              {func(g *ghfake.GitHub) { openPR(g, 4, title, "old body") }, false, []string{"OpenPullRequests", "EditPullRequest"}},
		"updates an old title":             {func(g *ghfake.GitHub) { openPR(g, 4, "old", body) }, false, []string{"OpenPullRequests", "EditPullRequest"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, g := withFake()
			tc.setup(g)
			out := proposal(tc.promoted)
			require.NoError(t, r.ensurePR(context.Background(), out, "kalypso/dev"))
			require.Equal(t, tc.methods, g.Methods())
			require.Len(t, g.Pulls[gitopsR], 1, "one pull request per environment")
			pr := g.Pulls[gitopsR][0]
			require.Equal(t, title, pr.GetTitle())
			require.Equal(t, body, pr.GetBody())
			require.Equal(t, pr.GetNumber(), out.PR.GetNumber())
			require.Equal(t, tc.promoted, hasLabel(pr, PromotedLabel))
		})
	}
}

func TestPullRequestTextNamesEnvironmentSourcesAndErrors(t *testing.T) {
	out := proposal(false)
	out.Result.Errors = scheduling.Errors{errAt("dev:a.yaml", 3, "", "bad")}
	require.Equal(t, "Kalypso: update dev from org/cp", prTitle(out))
	body := prBody(out)
	for _, part := range []string{"environment **dev** in GitOps branch `dev`", "| large | a | 1 | 0 | 0 |", "- main `m1`", "- dev `d1`", "### 1 error", "- `dev:a.yaml:3: bad`"} {
		require.Contains(t, body, part)
	}
	msg := commitMessage(out)
	require.Equal(t, "Kalypso: update environment dev\n\nKalypso-Environment: dev\nKalypso-Control-Plane: org/cp\nKalypso-Source: main m1\nKalypso-Source: dev d1\n", msg)
}

// racing is a GitHub where another replica opens the same pull request just before us.
type racing struct {
	*ghfake.GitHub
	other func()
}

func (r racing) CreatePullRequest(ctx context.Context, repo envref.Repo, pr *github.NewPullRequest) (*github.PullRequest, error) {
	r.other()
	return r.GitHub.CreatePullRequest(ctx, repo, pr)
}

func TestEnsurePullRequestLostRace(t *testing.T) {
	g := ghfake.New()
	r := New(nil, ghfake.Installations{GitHub: racing{GitHub: g, other: func() { openPR(g, 8, "theirs", "theirs") }}})
	out := proposal(false)
	require.NoError(t, r.ensurePR(context.Background(), out, "kalypso/dev"))
	require.Equal(t, []string{"OpenPullRequests", "CreatePullRequest", "OpenPullRequests"}, g.Methods())
	require.Equal(t, 8, out.PR.GetNumber(), "the other replica's pull request; the next reconcile updates it")

	g = ghfake.New()
	r = New(nil, ghfake.Installations{GitHub: g})
	g.Fail("CreatePullRequest", ghport.ErrPullRequestExists)
	err := r.ensurePR(context.Background(), proposal(false), "kalypso/dev")
	require.ErrorContains(t, err, "reported as existing but not found")
}

func TestEnsurePullRequestFailures(t *testing.T) {
	boom := errors.New("boom")
	cases := map[string]struct {
		method string
		setup  func(g *ghfake.GitHub)
	}{
		"list":  {"OpenPullRequests", func(*ghfake.GitHub) {}},
		"open":  {"CreatePullRequest", func(*ghfake.GitHub) {}},
		"edit":  {"EditPullRequest", func(g *ghfake.GitHub) { openPR(g, 4, "old", "old") }},
		"label": {"AddLabels", func(*ghfake.GitHub) {}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, g := withFake()
			tc.setup(g)
			g.Fail(tc.method, boom)
			require.ErrorIs(t, r.ensurePR(context.Background(), proposal(true), "kalypso/dev"), boom)
		})
	}
}

func TestClosePullRequest(t *testing.T) {
	ctx := context.Background()
	r, g := withFake()
	openPR(g, 4, "t", "b")
	out := proposal(false)
	pr, err := r.findPR(ctx, out, "kalypso/dev")
	require.NoError(t, err)
	require.NoError(t, r.closePR(ctx, out, pr))
	require.Equal(t, "closed", g.Pulls[gitopsR][0].GetState())

	g.Fail("EditPullRequest", ghport.ErrNotFound)
	require.NoError(t, r.closePR(ctx, out, pr), "already gone")
	boom := errors.New("boom")
	g.Fail("EditPullRequest", boom)
	require.ErrorIs(t, r.closePR(ctx, out, pr), boom)
}
