package handlers

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/reconcile"
)

func TestPullRequestPreviews(t *testing.T) {
	sha := strings.Repeat("a", 40)
	event := func(repo, base, action, state string) *github.PullRequestEvent {
		return &github.PullRequestEvent{Action: github.String(action), Installation: inst(), Repo: repository(plane),
			PullRequest: &github.PullRequest{Number: github.Int(7), State: github.String(state),
				Head: &github.PullRequestBranch{SHA: github.String(sha)}, Base: &github.PullRequestBranch{Ref: github.String(base)}}}
	}
	baseChanged := event("cp", "stage", "edited", "open")
	baseChanged.Changes = &github.EditChange{Base: &github.EditBase{Ref: &github.EditRef{From: github.String("dev")}}}
	cases := map[string]struct {
		event *github.PullRequestEvent
		want  []string
	}{
		"into an environment branch": {event("cp", "dev", "opened", "open"), []string{
			"preview dev of org/cp#7 at " + sha + " as 0", "report preview dev on " + sha + " failure=false"}},
		"into main, every environment": {event("cp", "main", "synchronize", "open"), []string{
			"preview dev of org/cp#7 at " + sha + " as 1", "report preview dev on " + sha + " failure=false",
			"preview stage of org/cp#7 at " + sha + " as 1", "report preview stage on " + sha + " failure=false"}},
		"reopened":            {event("cp", "stage", "reopened", "open"), []string{"preview stage of org/cp#7 at " + sha + " as 0", "report preview stage on " + sha + " failure=false"}},
		"base changed":        {baseChanged, []string{"preview stage of org/cp#7 at " + sha + " as 0", "report preview stage on " + sha + " failure=false"}},
		"title edited":        {event("cp", "dev", "edited", "open"), nil},
		"closed":              {event("cp", "dev", "closed", "closed"), nil},
		"synchronize, closed": {event("cp", "dev", "synchronize", "closed"), nil},
		"another branch":      {event("cp", "feature", "opened", "open"), nil},
		"labeled":             {event("cp", "dev", "labeled", "open"), nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			require.NoError(t, PullRequest{Core: f.core()}.Handle(context.Background(), "pull_request", "d", payload(t, tc.event)))
			require.Equal(t, tc.want, f.log)
		})
	}

	f := newFake()
	undeclared := event("cp", "dev", "opened", "open")
	undeclared.Repo = repository(stranger)
	require.NoError(t, PullRequest{Core: f.core()}.Handle(context.Background(), "pull_request", "d", payload(t, undeclared)))
	require.Empty(t, f.log, "a repository neither declared nor registered is not previewed")

	workload := event("svc", "main", "opened", "open")
	workload.Repo = repository(svc)
	require.NoError(t, PullRequest{Core: f.core()}.Handle(context.Background(), "pull_request", "d", payload(t, workload)))
	require.Equal(t, []string{"preview dev of team/svc#7 at " + sha + " as 2", "report preview dev on " + sha + " failure=false",
		"preview stage of team/svc#7 at " + sha + " as 2", "report preview stage on " + sha + " failure=false"}, f.log, "every environment reading the branch")
	f.log = nil

	f.log = nil
	commenting := f.core()
	commenting.PreviewComments = true
	require.NoError(t, PullRequest{Core: commenting}.Handle(context.Background(), "pull_request", "d", payload(t, event("cp", "main", "opened", "open"))))
	require.Equal(t, "comment on #7: dev success, stage success", f.log[len(f.log)-1], "one comment sums up every environment")

	f.failEnv["dev"] = errors.New("boom")
	require.NoError(t, PullRequest{Core: f.core()}.Handle(context.Background(), "pull_request", "d", payload(t, event("cp", "dev", "opened", "open"))))
	require.Contains(t, f.log, "report preview dev on "+sha+" failure=true", "a failed preview is reported")

	bad := event("cp", "dev", "opened", "open")
	bad.PullRequest.Head.SHA = github.String("../x")
	require.Error(t, PullRequest{Core: newFake().core()}.Handle(context.Background(), "pull_request", "d", payload(t, bad)))
}

func TestAcceptButton(t *testing.T) {
	click := func(user, name string) *github.CheckRunEvent {
		ev := checkRunEvent("requested_action", plane, "kalypso:org/cp:dev", "dev", "d1")
		ev.RequestedAction = &github.RequestedAction{Identifier: reconcile.AcceptAction}
		ev.Sender.Login = github.String(user)
		ev.CheckRun.Name = github.String(name)
		return ev
	}
	f := newFake()
	require.NoError(t, CheckRun{Core: f.core()}.Handle(context.Background(), "check_run", "d", payload(t, click("reader", "Kalypso / dev"))))
	require.Equal(t, []string{"accept org/cp run 5 by reader"}, f.log, "a refused click changes nothing")

	f.log = nil
	require.NoError(t, CheckRun{Core: f.core()}.Handle(context.Background(), "check_run", "d", payload(t, click("writer", "Kalypso / dev"))))
	require.Equal(t, []string{"accept org/cp run 5 by writer", "reconcile dev", "report dev on org/cp@dev d1 [dev: org/cp@dev:] failure=false"}, f.log,
		"an accepted environment check pushes the held change")

	f.log = nil
	require.NoError(t, CheckRun{Core: f.core()}.Handle(context.Background(), "check_run", "d", payload(t, click("writer", "Kalypso preview / dev"))))
	require.Equal(t, []string{"accept org/cp run 5 by writer"}, f.log, "an accepted preview pushes nothing")
}

// A change held by the guard is offered for acceptance on the environment branch's head
// commit, also when a workload push or a resync found it.
func TestHeldChangeIsReportedOnTheEnvironmentCommit(t *testing.T) {
	f := newFake()
	f.held = map[string]bool{"dev": true}
	require.NoError(t, f.core().Resync(context.Background(), []int64{42}))
	require.Contains(t, f.log, "report dev on org/cp@dev head-of-dev [dev: org/cp@dev:] failure=false")
	require.NotContains(t, strings.Join(f.log, "\n"), "report stage", "only the held environment")
}

func TestRerunOfAPreview(t *testing.T) {
	sha := strings.Repeat("b", 40)
	ev := checkRunEvent("rerequested", plane, reconcile.PreviewExternalID(plane, "dev"), "", sha)
	ev.CheckRun.PullRequests = []*github.PullRequest{
		{Number: github.Int(9), Head: &github.PullRequestBranch{SHA: github.String(sha)}, Base: &github.PullRequestBranch{Ref: github.String("dev")}},
		{Number: github.Int(10), Head: &github.PullRequestBranch{SHA: github.String(strings.Repeat("c", 40))}, Base: &github.PullRequestBranch{Ref: github.String("dev")}},
	}
	f := newFake()
	f.pulls = map[int]reconcile.PullRequest{9: {Installation: 42, Repo: plane, Number: 9, HeadSHA: sha, Base: "dev", Author: reconcile.Author{Login: "writer"}}}
	require.NoError(t, CheckRun{Core: f.core()}.Handle(context.Background(), "check_run", "d", payload(t, ev)))
	require.Equal(t, []string{"read org/cp#9", "preview dev of org/cp#9 at " + sha + " as 0", "report preview dev on " + sha + " failure=false full"}, f.log,
		"only the pull request whose head the check run is on, as GitHub has it now, for its author")

	f.log = nil
	f.pulls[9] = reconcile.PullRequest{Installation: 42, Repo: plane, Number: 9, HeadSHA: strings.Repeat("d", 40), Base: "dev"}
	require.NoError(t, CheckRun{Core: f.core()}.Handle(context.Background(), "check_run", "d", payload(t, ev)))
	require.Equal(t, []string{"read org/cp#9"}, f.log, "a pull request whose head moved on is previewed by its own event")
}

// The author's facts decide what a preview shows: the handler asks once per event.
func TestPreviewAudienceComesFromTheAuthor(t *testing.T) {
	sha := strings.Repeat("a", 40)
	ev := &github.PullRequestEvent{Action: github.String("opened"), Installation: inst(), Repo: repository(plane),
		PullRequest: &github.PullRequest{Number: github.Int(7), State: github.String("open"), User: &github.User{Login: github.String("writer")},
			Head: &github.PullRequestBranch{SHA: github.String(sha), Repo: &github.Repository{FullName: github.String("org/cp")}},
			Base: &github.PullRequestBranch{Ref: github.String("dev")}}}
	f := newFake()
	require.NoError(t, PullRequest{Core: f.core()}.Handle(context.Background(), "pull_request", "d", payload(t, ev)))
	require.Equal(t, []string{"preview dev of org/cp#7 at " + sha + " as 0", "report preview dev on " + sha + " failure=false full"}, f.log)
}

// "Show full preview": a refused click changes nothing; an approved one previews the pull
// request the check run was written for again.
func TestShowFullPreviewButton(t *testing.T) {
	sha := strings.Repeat("b", 40)
	click := func(user string) *github.CheckRunEvent {
		ev := checkRunEvent("requested_action", plane, reconcile.PreviewExternalID(plane, "dev"), "", sha)
		ev.RequestedAction = &github.RequestedAction{Identifier: reconcile.FullPreviewAction}
		ev.Sender.Login = github.String(user)
		return ev
	}
	f := newFake()
	f.pulls = map[int]reconcile.PullRequest{9: {Installation: 42, Repo: plane, Number: 9, HeadSHA: sha, Base: "dev", Author: reconcile.Author{Login: "mallory", Fork: true}}}
	require.NoError(t, CheckRun{Core: f.core()}.Handle(context.Background(), "check_run", "d", payload(t, click("triager"))))
	require.Equal(t, []string{"approve full preview org/cp run 5 by triager"}, f.log)

	f.log = nil
	require.NoError(t, CheckRun{Core: f.core()}.Handle(context.Background(), "check_run", "d", payload(t, click("writer"))))
	require.Equal(t, []string{"approve full preview org/cp run 5 by writer", "read org/cp#9", "preview dev of org/cp#9 at " + sha + " as 0",
		"report preview dev on " + sha + " failure=false"}, f.log)
}
