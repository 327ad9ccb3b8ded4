package reconcile

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/ghfake"
	"github.com/kalypso-gitops/kalypso/internal/gitfake"
)

const westConfig = "cluster-types/west-us/west-us-config.yaml"

// openPull commits files on top of the dev branch as pull request 1 (refs/pull/1/head only:
// the head branch lives elsewhere, as in a fork) and returns the request, by a writer.
func openPull(t *testing.T, s *seeded, files map[string]*string) PullRequest {
	t.Helper()
	return openPullInto(t, s, "dev", 1, files)
}

// openPullInto commits files on top of base as pull request number, by a writer.
func openPullInto(t *testing.T, s *seeded, base string, number int, files map[string]*string) PullRequest {
	t.Helper()
	s.remotes.SetHead(samplePlane, "pr-tmp", s.remotes.Head(samplePlane, base))
	head := s.remotes.Commit(samplePlane, "pr-tmp", files, "change")
	s.remotes.SetHead(samplePlane, "pr-tmp", "")
	s.remotes.SetRef(samplePlane, fmt.Sprintf("refs/pull/%d/head", number), head)
	return PullRequest{Installation: 1, Repo: samplePlane, Number: number, HeadSHA: head, Base: base, Audience: Audience{Full: true}}
}

// withSample returns the sample, a fake GitHub where users have the given permissions on every
// repository ("user", "level", …), and a reconciler over both.
func withSample(t *testing.T, permissions ...string) (*seeded, *ghfake.GitHub, *Reconciler) {
	t.Helper()
	s := seedSample(t)
	g := ghfake.New()
	for i := 0; i+1 < len(permissions); i += 2 {
		g.Permissions[permissions[i]] = permissions[i+1]
	}
	return s, g, New(s.cache, ghfake.Installations{GitHub: g})
}

// guardDev sets dev's guard to one limit, on main.
func guardDev(s *seeded, limit string) {
	envFile := ".environments/dev.yaml"
	guarded := strings.TrimRight(s.remotes.File(samplePlane, "main", envFile), " \n") + "\n  guard:\n    " + limit + "\n"
	s.remotes.Commit(samplePlane, "main", map[string]*string{envFile: &guarded}, "guard dev")
}

func TestPreviewOfAnEnvironmentBranchPullRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := seedSample(t)
	g := ghfake.New()
	r := New(s.cache, ghfake.Installations{GitHub: g})
	west := strings.Replace(s.remotes.File(samplePlane, "dev", westConfig), "mysql2", "mysql3", 1)
	pr := openPull(t, s, map[string]*string{westConfig: &west})
	gitopsDev := s.remotes.Head(sampleGitOps, "dev")

	p, err := r.Preview(ctx, sampleDev, pr, AsEnvironmentBranch)
	require.NoError(t, err)
	require.Equal(t, "head", p.Read)
	require.Empty(t, p.Proposed.Errors)
	require.NotEmpty(t, p.Plan.Groups)
	for _, g := range p.Plan.Groups {
		require.Len(t, g.Changes, 1, g.Assignment)
		require.True(t, strings.HasSuffix(g.Changes[0].Path, "/platform-config.yaml"), g.Changes[0].Path)
	}
	require.Equal(t, len(p.Plan.Groups), p.Blast.Changed)
	require.Zero(t, p.Blast.Added+p.Blast.Removed)

	run, err := r.ReportPreview(ctx, pr, sampleDev, p, nil)
	require.NoError(t, err)
	require.Equal(t, "Kalypso preview / dev", run.GetName())
	require.Equal(t, pr.HeadSHA, run.GetHeadSHA())
	require.Equal(t, "success", run.GetConclusion())
	require.Contains(t, run.GetOutput().GetText(), "-  DATABASE_URL: mysql://west:8806/mysql2\n+  DATABASE_URL: mysql://west:8806/mysql3\n")
	require.Equal(t, gitopsDev, s.remotes.Head(sampleGitOps, "dev"), "nothing is pushed")
	require.Empty(t, s.remotes.Head(sampleGitOps, "kalypso/dev"), "nothing is pushed")
	require.Zero(t, g.Count("CreatePullRequest")+g.Count("EditPullRequest"))

	again, err := r.ReportPreview(ctx, pr, sampleDev, p, nil)
	require.NoError(t, err)
	require.Equal(t, run.GetID(), again.GetID(), "a replayed event keeps the one check run")
}

func TestPreviewWithoutChangeIsNeutral(t *testing.T) {
	t.Parallel()
	s := seedSample(t)
	g := ghfake.New()
	r := New(s.cache, ghfake.Installations{GitHub: g})
	pr := openPull(t, s, map[string]*string{"notes.txt": gitfake.Str("hello")})
	p, err := r.Preview(context.Background(), sampleDev, pr, AsEnvironmentBranch)
	require.NoError(t, err)
	run, err := r.ReportPreview(context.Background(), pr, sampleDev, p, nil)
	require.NoError(t, err)
	require.Equal(t, "neutral", run.GetConclusion())
	require.Equal(t, "dev: no change", run.GetOutput().GetTitle())
}

func TestPreviewAnnotatesABrokenFileOfThePullRequest(t *testing.T) {
	t.Parallel()
	s := seedSample(t)
	g := ghfake.New()
	r := New(s.cache, ghfake.Installations{GitHub: g})
	broken := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: west-us-config\n  labels: [oops\n"
	pr := openPull(t, s, map[string]*string{westConfig: &broken})
	p, err := r.Preview(context.Background(), sampleDev, pr, AsEnvironmentBranch)
	require.NoError(t, err)
	run, err := r.ReportPreview(context.Background(), pr, sampleDev, p, nil)
	require.NoError(t, err)
	require.Equal(t, "failure", run.GetConclusion())
	anns := g.Annotations[run.GetID()]
	require.NotEmpty(t, anns)
	require.Equal(t, westConfig, anns[0].GetPath())
	require.Positive(t, anns[0].GetStartLine())
}

func TestPreviewAppliesTheGuardFromMain(t *testing.T) {
	t.Parallel()
	s := seedSample(t)
	g := ghfake.New()
	r := New(s.cache, ghfake.Installations{GitHub: g})
	guardDev(s, "maxChanged: 0")
	west := strings.Replace(s.remotes.File(samplePlane, "dev", westConfig), "mysql2", "mysql3", 1)
	pr := openPull(t, s, map[string]*string{westConfig: &west})
	p, err := r.Preview(context.Background(), sampleDev, pr, AsEnvironmentBranch)
	require.NoError(t, err)
	require.Len(t, p.Violations, 1, "%+v", p.Blast)
	run, err := r.ReportPreview(context.Background(), pr, sampleDev, p, nil)
	require.NoError(t, err)
	require.Equal(t, "failure", run.GetConclusion())
	require.Regexp(t, `the change changes \d+ of \d+ assignments \([0-9.]+%\), more than maxChanged 0`, run.GetOutput().GetSummary())
}

func TestPreviewOfAWorkloadPullRequest(t *testing.T) {
	t.Parallel()
	s := seedSample(t)
	g := ghfake.New()
	r := New(s.cache, ghfake.Installations{GitHub: g})
	file := "workloads/observability.yaml"
	changed := strings.Replace(s.remotes.File(sampleWorkload, "main", file), "path: ./prometheus", "path: ./prometheus-v2", 1)
	s.remotes.SetHead(sampleWorkload, "pr-tmp", s.remotes.Head(sampleWorkload, "main"))
	head := s.remotes.Commit(sampleWorkload, "pr-tmp", map[string]*string{file: &changed}, "change")
	s.remotes.SetHead(sampleWorkload, "pr-tmp", "")
	s.remotes.SetRef(sampleWorkload, "refs/pull/4/head", head)
	pr := PullRequest{Installation: 1, Repo: sampleWorkload, Number: 4, HeadSHA: head, Base: "main", Audience: Audience{Full: true}}

	p, err := r.Preview(context.Background(), sampleDev, pr, AsWorkload)
	require.NoError(t, err)
	require.Equal(t, head, p.Commit)
	require.Equal(t, 1, p.Blast.Changed)
	run, err := r.ReportPreview(context.Background(), pr, sampleDev, p, nil)
	require.NoError(t, err)
	require.Equal(t, "success", run.GetConclusion())
	require.Contains(t, run.GetOutput().GetText(), "-  path: \"./prometheus\" \n+  path: \"./prometheus-v2\" \n")

	broken := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata:\n  name: observability\nspec:\n  deploymentTargets: 3\n"
	s.remotes.SetHead(sampleWorkload, "pr-tmp", s.remotes.Head(sampleWorkload, "main"))
	head = s.remotes.Commit(sampleWorkload, "pr-tmp", map[string]*string{file: &broken}, "break")
	s.remotes.SetRef(sampleWorkload, "refs/pull/4/head", head)
	pr.HeadSHA = head
	p, err = r.Preview(context.Background(), sampleDev, pr, AsWorkload)
	require.NoError(t, err)
	run, err = r.ReportPreview(context.Background(), pr, sampleDev, p, nil)
	require.NoError(t, err)
	require.Equal(t, "failure", run.GetConclusion())
	anns := g.Annotations[run.GetID()]
	require.NotEmpty(t, anns)
	require.Equal(t, file, anns[0].GetPath())
	require.Equal(t, 6, anns[0].GetStartLine())
}

func TestAcceptAPreviewOverTheGuard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, g, r := withSample(t, "reader", "read", "writer", "write")
	guardDev(s, "maxChanged: 0")
	west := strings.Replace(s.remotes.File(samplePlane, "dev", westConfig), "mysql2", "mysql3", 1)
	pr := openPull(t, s, map[string]*string{westConfig: &west})
	p, err := r.Preview(ctx, sampleDev, pr, AsEnvironmentBranch)
	require.NoError(t, err)
	run, err := r.ReportPreview(ctx, pr, sampleDev, p, nil)
	require.NoError(t, err)
	require.Equal(t, "failure", run.GetConclusion())
	require.Equal(t, AcceptAction, g.Actions[run.GetID()][0].Identifier)

	a, err := r.AcceptBlastRadius(ctx, 1, samplePlane, run, "reader")
	require.NoError(t, err)
	require.False(t, a.Accepted)
	require.True(t, a.Preview)
	got, _ := g.CheckRun(ctx, samplePlane, run.GetID())
	require.Equal(t, "failure", got.GetConclusion())
	require.True(t, strings.HasPrefix(got.GetOutput().GetSummary(), "**Refused:** @reader cannot accept: it needs write permission on "), got.GetOutput().GetSummary())
	require.NotEmpty(t, g.Actions[run.GetID()], "the button stays")

	a, err = r.AcceptBlastRadius(ctx, 1, samplePlane, run, "writer")
	require.NoError(t, err)
	require.True(t, a.Accepted)
	got, _ = g.CheckRun(ctx, samplePlane, run.GetID())
	require.Equal(t, "success", got.GetConclusion())
	require.Regexp(t, `^\*\*Blast radius accepted\*\* by @writer at 20\d\d-`, got.GetOutput().GetSummary())
	require.NotContains(t, got.GetOutput().GetSummary(), "Refused")
	require.Empty(t, g.Actions[run.GetID()], "no button once accepted")

	again, err := r.ReportPreview(ctx, pr, sampleDev, p, nil)
	require.NoError(t, err)
	require.Equal(t, "success", again.GetConclusion(), "a replayed preview keeps the acceptance of its commit")
	require.Contains(t, again.GetOutput().GetSummary(), "**Blast radius accepted** by @writer")

	a, err = r.AcceptBlastRadius(ctx, 1, samplePlane, run, "writer")
	require.NoError(t, err)
	require.False(t, a.Accepted)
	require.NotEmpty(t, a.Refusal, "nothing left to accept")
}
