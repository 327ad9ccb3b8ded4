package reconcile

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envcheck"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghfake"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

var (
	plane    = envref.Repo{Owner: "org", Name: "cp"}
	workload = envref.Repo{Owner: "team", Name: "svc"}
	gitopsR  = envref.Repo{Owner: "org", Name: "gitops"}
	devEnv   = envref.Env{Installation: 7, ControlPlane: plane, Name: "dev"}
)

// withFake returns a reconciler whose GitHub is a fresh fake; it reads no repository.
func withFake() (*Reconciler, *ghfake.GitHub) {
	g := ghfake.New()
	return New(nil, ghfake.Installations{GitHub: g}), g
}

func errAt(file string, line int, object, msg string) *scheduling.Error {
	return &scheduling.Error{Pos: scheduling.Pos{File: file, Line: line}, Object: object, Msg: msg}
}

// outcome is an environment's outcome with assignments rendered and errors.
func outcome(assignments int, errs ...*scheduling.Error) *Outcome {
	outputs := map[string]render.Files{}
	for i := range assignments {
		outputs[fmt.Sprint(i)] = render.Files{}
	}
	res := &render.Result{Outputs: render.NewOutputs(outputs), Failed: map[string]*scheduling.Error{}, Errors: errs, HasTarget: true}
	return &Outcome{Env: devEnv, Result: res, GitOps: gitopsR, Base: "dev"}
}

func TestReportSaysWhatTheEnvironmentIs(t *testing.T) {
	pr := &github.PullRequest{Number: github.Int(3), HTMLURL: github.String("https://x/pull/3")}
	cases := map[string]struct {
		commit      Commit
		out         *Outcome
		failure     error
		conclusion  string
		title       string
		annotations int
		textHas     string
		summaryHas  string
	}{
		"up to date": {BranchCommit(7, plane, "dev", "c1"), outcome(2), nil, "success",
			"dev: 2 assignments, GitOps branch up to date", 0, "", "2 assignments rendered, 0 failed, 0 errors"},
		"with its pull request": {BranchCommit(7, plane, "dev", "c1"), func() *Outcome { o := outcome(1); o.PR = pr; return o }(), nil, "success",
			"dev: 1 assignment, pull request #3", 0, "", "[org/gitops#3](https://x/pull/3)"},
		"an error in the commit's own file": {BranchCommit(7, plane, "dev", "c1"), outcome(1, errAt("dev:cluster-types/large.yaml", 4, `ClusterType "large"`, "bad")), nil, "failure",
			"1 error in dev", 1, "", "1 error."},
		"an error elsewhere fails a control-plane commit": {BranchCommit(7, plane, "dev", "c1"), outcome(1, errAt("team/svc@main:workload.yaml", 2, "", "bad")), nil, "failure",
			"1 error in dev", 0, "- `team/svc@main:workload.yaml:2: bad`", ""},
		"another team's error leaves a workload commit green": {BranchCommit(7, workload, "main", "c2"), outcome(1, errAt("other/repo@main:w.yaml", 2, "", "bad")), nil, "success",
			"1 error in dev", 0, "Errors in other repositories or branches", ""},
		"a workload's own error": {BranchCommit(7, workload, "main", "c2"), outcome(1, errAt("team/svc@main:w.yaml", 0, "", "too large")), nil, "failure",
			"1 error in dev", 1, "", ""},
		"validated main": {BranchCommit(7, plane, "main", "abcdef0123").AsMain(), outcome(1, errAt("main@abcdef0:templates/t.yaml", 9, "", "bad")), nil, "failure",
			"1 error in dev", 1, "", ""},
		"could not reconcile": {BranchCommit(7, plane, "dev", "c1"), &Outcome{Env: devEnv}, errors.New("boom"), "failure",
			"could not reconcile dev", 0, "", "**Error:** boom"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, g := withFake()
			require.NoError(t, r.Report(context.Background(), tc.commit, tc.out, tc.failure))
			require.Equal(t, []string{"CheckRuns", "CreateCheckRun"}, g.Methods())
			opts := g.Calls()[1].Args[0].(github.CreateCheckRunOptions)
			require.Equal(t, tc.commit.Repo, g.Calls()[1].Repo)
			require.Equal(t, "Kalypso / dev", opts.Name)
			require.Equal(t, tc.commit.SHA, opts.HeadSHA)
			require.Equal(t, "kalypso:org/cp:dev", opts.GetExternalID())
			require.Equal(t, tc.conclusion, opts.GetConclusion())
			require.Equal(t, "completed", opts.GetStatus())
			require.Equal(t, tc.title, opts.Output.GetTitle())
			require.Len(t, opts.Output.Annotations, tc.annotations)
			require.Contains(t, opts.Output.GetText(), tc.textHas)
			require.Contains(t, opts.Output.GetSummary(), tc.summaryHas)
		})
	}
}

func TestReportAnnotationLinesAndPaths(t *testing.T) {
	r, g := withFake()
	out := outcome(1, errAt("dev:a.yaml", 4, `ClusterType "large"`, "bad label"), errAt("dev:b.yaml", 0, "", "file too large"))
	require.NoError(t, r.Report(context.Background(), BranchCommit(7, plane, "dev", "c1"), out, nil))
	anns := g.Calls()[1].Args[0].(github.CreateCheckRunOptions).Output.Annotations
	require.Equal(t, "a.yaml", anns[0].GetPath())
	require.Equal(t, 4, anns[0].GetStartLine())
	require.Equal(t, `ClusterType "large": bad label`, anns[0].GetMessage())
	require.Equal(t, "failure", anns[0].GetAnnotationLevel())
	require.Equal(t, 1, anns[1].GetStartLine(), "a whole-file error is shown on the first line")
	require.Equal(t, 1, anns[1].GetEndLine())
}

func TestReportSendsAtMost50Annotations(t *testing.T) {
	for _, n := range []int{49, 50, 51, 120} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			r, g := withFake()
			var errs []*scheduling.Error
			for i := range n {
				errs = append(errs, errAt("dev:f.yaml", i+1, "", "bad"))
			}
			require.NoError(t, r.Report(context.Background(), BranchCommit(7, plane, "dev", "c1"), outcome(1, errs...), nil))
			require.Equal(t, []string{"CheckRuns", "CreateCheckRun"}, g.Methods())
			require.Len(t, g.Annotations[g.Runs[plane][0].GetID()], min(n, 50))
		})
	}
}

func TestReportReusesTheCheckRunOfTheCommit(t *testing.T) {
	ctx := context.Background()
	commit := BranchCommit(7, plane, "dev", "c1")
	broken := outcome(1, errAt("dev:a.yaml", 1, "", "bad"))

	r, g := withFake()
	require.NoError(t, r.Report(ctx, commit, broken, nil))
	g.Reset()
	require.NoError(t, r.Report(ctx, commit, broken, nil))
	require.Equal(t, []string{"CheckRuns"}, g.Methods(), "a replay changes nothing")

	g.Reset()
	withPR := outcome(1, errAt("dev:a.yaml", 1, "", "bad"))
	withPR.PR = &github.PullRequest{Number: github.Int(9)}
	require.NoError(t, r.Report(ctx, commit, withPR, nil))
	require.Equal(t, []string{"CheckRuns", "UpdateCheckRun"}, g.Methods(), "new text, the same annotation")
	require.Empty(t, g.Calls()[1].Args[1].(github.UpdateCheckRunOptions).Output.Annotations, "never sent twice")

	g.Reset()
	require.NoError(t, r.Report(ctx, commit, outcome(1), nil))
	require.Equal(t, []string{"CheckRuns", "CreateCheckRun"}, g.Methods(), "a fixed error would stay on the old run")
	require.Len(t, g.Runs[plane], 2)

	g.Reset()
	rerun := commit
	rerun.Rerun = true
	require.NoError(t, r.Report(ctx, rerun, outcome(1), nil))
	require.Equal(t, []string{"CreateCheckRun"}, g.Methods(), "a re-run asked for by a user gets a new run")
}

func TestReportUpdatesARunWithoutAnnotations(t *testing.T) {
	ctx := context.Background()
	r, g := withFake()
	commit := BranchCommit(7, plane, "dev", "c1")
	require.NoError(t, r.Report(ctx, commit, outcome(1), nil))
	g.Reset()
	require.NoError(t, r.Report(ctx, commit, outcome(1, errAt("dev:a.yaml", 1, "", "bad")), nil))
	require.Equal(t, []string{"CheckRuns", "UpdateCheckRun"}, g.Methods())
	opts := g.Calls()[1].Args[1].(github.UpdateCheckRunOptions)
	require.Equal(t, "failure", opts.GetConclusion())
	require.Len(t, opts.Output.Annotations, 1)
}

func TestReportFailures(t *testing.T) {
	boom := errors.New("boom")
	for _, method := range []string{"CheckRuns", "CreateCheckRun", "UpdateCheckRun"} {
		t.Run(method, func(t *testing.T) {
			r, g := withFake()
			commit := BranchCommit(7, plane, "dev", "c1")
			if method == "UpdateCheckRun" { // a run to update
				require.NoError(t, r.Report(context.Background(), commit, outcome(1), nil))
			}
			g.Fail(method, boom)
			err := r.Report(context.Background(), commit, outcome(1, errAt("dev:f.yaml", 1, "", "bad")), nil)
			require.ErrorIs(t, err, boom)
		})
	}
}

func TestCheckExternalIDRoundTrip(t *testing.T) {
	cp, env, ok := ParseExternalID(CheckExternalID(plane, "dev"))
	require.True(t, ok)
	require.Equal(t, plane, cp)
	require.Equal(t, "dev", env)
	for _, bad := range []string{"kalypso-promote:org/cp:dev:abc", "kalypso:org/cp:", "kalypso:orgcp:dev", "other"} {
		_, _, ok := ParseExternalID(bad)
		require.False(t, ok, bad)
	}
}

// However many errors a commit has, its check run costs the same REST calls: the first errors
// in its own files are annotations, the others are listed in the text.
func TestReportCapsAnnotations(t *testing.T) {
	var errs []*scheduling.Error
	for i := range 500 {
		errs = append(errs, errAt("dev:bomb.yaml", i+1, "", fmt.Sprintf("broken %d", i)))
	}
	r, g := withFake()
	require.NoError(t, r.Report(context.Background(), BranchCommit(7, plane, "dev", "c1"), outcome(1, errs...), nil))
	require.Equal(t, []string{"CheckRuns", "CreateCheckRun"}, g.Methods(), "one request carries the check run")
	opts := g.Calls()[1].Args[0].(github.CreateCheckRunOptions)
	require.Len(t, opts.Output.Annotations, maxAnnotations)
	require.Contains(t, opts.Output.GetText(), fmt.Sprintf("%d more errors beyond the first %d", 500-maxAnnotations, maxAnnotations))
	require.Contains(t, opts.Output.GetText(), "dev:bomb.yaml:51: broken 50")
}

// TestReportKeepsTheHoldItShows checks that a check run showing a hold (written by the
// promoter) keeps it when the commit is reported again, and is rewritten only when the
// outcome changes.
func TestReportKeepsTheHoldItShows(t *testing.T) {
	ctx := context.Background()
	r, g := withFake()
	commit := BranchCommit(7, plane, "main", "c1").AsMain()
	require.NoError(t, r.Report(ctx, commit, outcome(2), nil))
	run := g.Runs[plane][0]
	c := envcheck.WithHold(envcheck.Content{Conclusion: run.GetConclusion(), Title: run.GetOutput().GetTitle(), Summary: run.GetOutput().GetSummary()},
		"**dev is held** by @alice: rollback: why.")
	run.Conclusion, run.Output.Title, run.Output.Summary = github.String(c.Conclusion), github.String(c.Title), github.String(c.Summary)

	g.Reset()
	require.NoError(t, r.Report(ctx, commit, outcome(2), nil))
	require.Equal(t, []string{"CheckRuns"}, g.Methods(), "the same outcome: the held run stays as it is")

	require.NoError(t, r.Report(ctx, commit, outcome(3), nil))
	run = g.Runs[plane][0]
	require.Equal(t, envcheck.HeldConclusion, run.GetConclusion())
	require.Equal(t, envcheck.TitlePrefix+"dev: 3 assignments, GitOps branch up to date", run.GetOutput().GetTitle())
	paragraph, held := envcheck.HoldOf(run.GetOutput().GetSummary())
	require.True(t, held, "a new outcome keeps the hold")
	require.Equal(t, "**dev is held** by @alice: rollback: why.", paragraph)
}
