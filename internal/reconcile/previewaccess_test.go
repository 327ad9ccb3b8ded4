package reconcile

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghfake"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// usedGit records which repositories the reconciler reads.
type usedGit struct {
	Git
	mu   sync.Mutex
	used map[string]bool
}

func (g *usedGit) Use(ctx context.Context, r gitcache.Remote, branches []string, fn func(*gitcache.Session) error) error {
	g.mu.Lock()
	g.used[r.Owner+"/"+r.Name] = true
	g.mu.Unlock()
	return g.Git.Use(ctx, r, branches, fn)
}

func (g *usedGit) read(repo envref.Repo) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.used[repo.String()]
}

var secretRepo = envref.Repo{Owner: "team", Name: "secret"}

const secretRegistration = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata:
  name: secret
spec:
  workload:
    repo: https://github.com/team/secret
    branch: main
    path: ./workloads
  workspace: platform-team
`

const secretWorkload = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: ledger
  labels:
    stack: observability
spec:
  deploymentTargets:
    - name: vaultsync
      environment: dev
      manifests:
        repo: https://github.com/team/secret-gitops
        branch: dev
        path: ./classified
`

// A pull request that registers a repository gets it listed as not previewed, and the
// repository is not read at all; once main registers it, the next pull request reads it.
func TestPreviewReadsOnlyRepositoriesTheBaseRegisters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := seedSample(t)
	s.remotes.Commit(secretRepo, "main", map[string]*string{"workloads/ledger.yaml": str(secretWorkload)}, "private")
	git := &usedGit{Git: s.cache, used: map[string]bool{}}
	g := ghfake.New()
	r := New(git, ghfake.Installations{GitHub: g})

	pr := openPullInto(t, s, "main", 2, map[string]*string{"workloads/secret.yaml": str(secretRegistration)})
	p, err := r.Preview(ctx, sampleDev, pr, AsMain)
	require.NoError(t, err)
	require.Equal(t, []string{"not previewed: team/secret branch main is not registered on main yet"}, p.NotPreviewed)
	require.False(t, git.read(secretRepo), "nothing of the repository is fetched")
	require.Empty(t, p.Proposed.Errors, "a registration not previewed is no error of the pull request")
	require.Zero(t, p.Blast.Added)
	run, err := r.ReportPreview(ctx, pr, sampleDev, p, nil)
	require.NoError(t, err)
	require.Contains(t, run.GetOutput().GetSummary(), "- not previewed: team/secret branch main is not registered on main yet\n")
	require.NotContains(t, run.GetOutput().GetSummary()+run.GetOutput().GetText(), "ledger")

	// A pull request into dev pinning a commit of another branch that registers it: the same.
	s.remotes.SetHead(samplePlane, "feature", s.remotes.Head(samplePlane, "main"))
	feature := s.remotes.Commit(samplePlane, "feature", map[string]*string{"workloads/secret.yaml": str(secretRegistration)}, "register secret")
	pin := regexp.MustCompile(`commit: [0-9a-f]+`).ReplaceAllString(s.remotes.File(samplePlane, "dev", "base-repo.yaml"), "commit: "+feature)
	pr = openPullInto(t, s, "dev", 3, map[string]*string{"base-repo.yaml": &pin})
	p, err = r.Preview(ctx, sampleDev, pr, AsEnvironmentBranch)
	require.NoError(t, err)
	require.Equal(t, []string{"not previewed: team/secret branch main is not registered on dev yet"}, p.NotPreviewed)
	require.False(t, git.read(secretRepo))

	s.remotes.Commit(samplePlane, "main", map[string]*string{"workloads/secret.yaml": str(secretRegistration)}, "register secret")
	pr = openPullInto(t, s, "main", 2, map[string]*string{"notes.txt": str("hello")})
	p, err = r.Preview(ctx, sampleDev, pr, AsMain)
	require.NoError(t, err)
	require.Empty(t, p.NotPreviewed)
	require.True(t, git.read(secretRepo), "registered on main: read")
	require.Equal(t, 1, p.Blast.Added, "main registers it, dev does not pin that main yet: its assignment is added")
}

func str(s string) *string { return &s }

// An author without write permission sees counts and assignment names only, with a button;
// a reader's click is refused, a writer's approves a full preview of that head commit only.
func TestRestrictedPreviewUntilAWriterApproves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, g, r := withSample(t, "triager", "read", "writer", "write")
	west := strings.Replace(s.remotes.File(samplePlane, "dev", westConfig), "mysql2", "mysql3", 1)
	pr := openPull(t, s, map[string]*string{westConfig: &west})
	pr.Audience = Audience{Why: "the pull request comes from a fork"}
	p, err := r.Preview(ctx, sampleDev, pr, AsEnvironmentBranch)
	require.NoError(t, err)
	run, err := r.ReportPreview(ctx, pr, sampleDev, p, nil)
	require.NoError(t, err)
	out := run.GetOutput()
	require.Equal(t, "success", run.GetConclusion())
	require.NotContains(t, out.GetSummary()+out.GetText(), "mysql")
	require.NotContains(t, out.GetText(), "```")
	require.Contains(t, out.GetText(), "- `large/observability-prometheus`: 1 file changed\n")
	require.True(t, strings.HasPrefix(out.GetSummary(), "**Counts and names only:** the pull request comes from a fork, so "), out.GetSummary())
	require.Contains(t, out.GetSummary(), "| large | 0 | 1 | 0 |")
	require.Equal(t, []*github.CheckRunAction{fullPreviewButton()}, g.Actions[run.GetID()])

	a, err := r.ApproveFullPreview(ctx, 1, samplePlane, run, "triager")
	require.NoError(t, err)
	require.False(t, a.Approved)
	got, _ := g.CheckRun(ctx, samplePlane, run.GetID())
	require.Contains(t, got.GetOutput().GetSummary(), `**Refused:** @triager cannot show the full preview: it needs write permission on microsoft/kalypso-control-plane (has "read")`)
	require.Equal(t, []*github.CheckRunAction{fullPreviewButton()}, g.Actions[run.GetID()], "the button stays")

	a, err = r.ApproveFullPreview(ctx, 1, samplePlane, run, "writer")
	require.NoError(t, err)
	require.True(t, a.Approved)
	require.Equal(t, Approval{Env: sampleDev, Number: 1, Approved: true}, *a, "the pull request to preview again")
	got, _ = g.CheckRun(ctx, samplePlane, run.GetID())
	require.Regexp(t, "^\\*\\*Full preview approved\\*\\* by @writer at 20[0-9-]+T[0-9:]+Z for head commit `"+pr.HeadSHA+"`\\.\n\n", got.GetOutput().GetSummary())
	require.NotContains(t, got.GetOutput().GetSummary(), "Refused")
	require.Empty(t, g.Actions[run.GetID()], "used: the button goes")

	again, err := r.ReportPreview(ctx, pr, sampleDev, p, nil)
	require.NoError(t, err)
	require.Equal(t, run.GetID(), again.GetID())
	require.Contains(t, again.GetOutput().GetText(), "-  DATABASE_URL: mysql://west:8806/mysql2\n+  DATABASE_URL: mysql://west:8806/mysql3\n")
	require.NotContains(t, again.GetOutput().GetSummary(), "Counts and names only")
	require.Contains(t, again.GetOutput().GetSummary(), "**Full preview approved** by @writer", "the record stays")
	a, err = r.ApproveFullPreview(ctx, 1, samplePlane, again, "writer")
	require.NoError(t, err)
	require.False(t, a.Approved, "single-use")

	next := openPull(t, s, map[string]*string{westConfig: str(strings.Replace(west, "mysql3", "mysql4", 1))})
	next.Audience = pr.Audience
	p, err = r.Preview(ctx, sampleDev, next, AsEnvironmentBranch)
	require.NoError(t, err)
	run, err = r.ReportPreview(ctx, next, sampleDev, p, nil)
	require.NoError(t, err)
	require.NotContains(t, run.GetOutput().GetText(), "mysql", "an approval holds for its head commit only")
}

// What a preview that shows counts and names only says of errors: those read from the pull
// request's own files at their line, a rendering error there without its message (it may hold
// other repositories' values), a message naming another repository's file not at all, and
// errors elsewhere only counted.
func TestRestrictedPreviewNamesNoContentOfOtherRepositories(t *testing.T) {
	own := errAt("dev:cluster-types/large.yaml", 4, `ClusterType "large"`, "bad label")
	collides := errAt("dev:cluster-types/small.yaml", 2, `DeploymentTarget "x"`, "is also defined at team/svc@main:w.yaml:3")
	rendered := errAt("dev:configs/db.yaml", 7, `ConfigMap "db"`, "DATABASE_URL: mysql://secret does not match")
	elsewhere := errAt("team/svc@main:workloads/w.yaml", 9, `Workload "w"`, "secret-target: bad")
	snap := &scheduling.Snapshot{Errors: scheduling.Errors{own, collides, elsewhere}, Sources: []scheduling.SourceCommit{{Name: "dev"}},
		Registrations: []*scheduling.WorkloadRegistration{{Spec: scheduling.WorkloadRegistrationSpec{Workload: scheduling.ManifestsSpec{Repo: "https://github.com/team/svc", Branch: "main"}}}}}
	p := &Preview{Env: devEnv, Read: "merge", As: AsEnvironmentBranch, Plan: &render.Plan{},
		Proposed: &render.Result{Snapshot: snap, Errors: scheduling.Errors{own, collides, rendered, elsewhere}}}
	pr := PullRequest{Repo: plane, Number: 3, HeadSHA: strings.Repeat("a", 40), Base: "dev", Audience: Audience{Why: "@m has read permission on org/cp"}}

	want, anns := previewContent(pr, p, "", false, nil)
	var got []string
	for _, a := range anns {
		got = append(got, a.GetPath()+": "+a.GetMessage())
	}
	require.Equal(t, []string{"cluster-types/large.yaml: ClusterType \"large\": bad label", "configs/db.yaml: " + renderedElsewhere}, got)
	require.Contains(t, want.Summary, "4 errors: 2 annotated in the pull request's files; **2 not shown:** a registered repository could not be rendered.")
	all := want.Summary + want.Text
	for _, secret := range []string{"team/svc", "w.yaml", "secret", "mysql"} {
		require.NotContains(t, all, secret)
	}

	full, anns := previewContent(pr, p, "", true, nil)
	require.Len(t, anns, 3, "a full preview annotates every error in the pull request's files")
	require.Contains(t, full.Text, "team/svc@main:workloads/w.yaml:9")

	failed := failedPreview(pr, p, false, errors.New("fetch team/secret: denied"))
	require.NotContains(t, failed.Summary, "team/secret", "the reason of a failure is for a full preview")
	require.Contains(t, failedPreview(pr, p, true, errors.New("fetch team/secret: denied")).Summary, "fetch team/secret: denied")
}

// Who may see everything: an author with write permission whose head is on the repository.
func TestAudienceOfAPullRequest(t *testing.T) {
	t.Parallel()
	g := ghfake.New()
	g.Permissions["reader"], g.Permissions["writer"] = "read", "write"
	r := New(nil, ghfake.Installations{GitHub: g})
	same := &github.Repository{FullName: github.String("org/cp")}
	pull := func(login, association string, head *github.Repository) PullRequest {
		return PullRequestOf(7, plane, &github.PullRequest{Number: github.Int(3), User: &github.User{Login: github.String(login)},
			AuthorAssociation: github.String(association), Head: &github.PullRequestBranch{SHA: github.String("abc"), Repo: head},
			Base: &github.PullRequestBranch{Ref: github.String("main")}})
	}
	cases := []struct {
		pr    PullRequest
		want  Audience
		calls int
	}{
		{pull("writer", "COLLABORATOR", same), Audience{Full: true}, 1},
		{pull("writer", "MEMBER", &github.Repository{FullName: github.String("writer/cp")}), Audience{Why: "the pull request comes from a fork"}, 0},
		{pull("writer", "OWNER", nil), Audience{Why: "the pull request comes from a fork"}, 0},
		{pull("reader", "COLLABORATOR", same), Audience{Why: "@reader has read permission on org/cp"}, 1},
		{pull("stranger", "FIRST_TIME_CONTRIBUTOR", same), Audience{Why: "@stranger is not a collaborator of org/cp"}, 0},
		{pull("", "", same), Audience{Why: "its author is unknown"}, 0},
	}
	for _, tc := range cases {
		g.Reset()
		require.Equal(t, tc.want, r.Audience(context.Background(), tc.pr), "%+v", tc.pr.Author)
		require.Equal(t, tc.calls, g.Count("Permission"))
	}
	g.Fail("Permission", errors.New("502"))
	require.Equal(t, Audience{Why: "the permission of @writer on org/cp could not be read"}, r.Audience(context.Background(), pull("writer", "MEMBER", same)))
	require.Equal(t, PullRequest{Installation: 7, Repo: plane, Number: 3, HeadSHA: "abc", Base: "main",
		Author: Author{Login: "writer", Association: "MEMBER"}}, pull("writer", "MEMBER", same))
}

func TestReadPullRequest(t *testing.T) {
	t.Parallel()
	g := ghfake.New()
	r := New(nil, ghfake.Installations{GitHub: g})
	g.Pulls[plane] = []*github.PullRequest{{Number: github.Int(4), State: github.String("closed"), Head: &github.PullRequestBranch{SHA: github.String("abc")}}}
	pr, open, err := r.ReadPullRequest(context.Background(), 7, plane, 4)
	require.NoError(t, err)
	require.False(t, open)
	require.Equal(t, "abc", pr.HeadSHA)
	_, open, err = r.ReadPullRequest(context.Background(), 7, plane, 5)
	require.NoError(t, err)
	require.False(t, open, "gone")
	g.Fail("PullRequest", errors.New("502"))
	_, _, err = r.ReadPullRequest(context.Background(), 7, plane, 4)
	require.Error(t, err)
}
