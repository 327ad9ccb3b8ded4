package handlers

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
)

func checkRunEvent(action string, repo envref.Repo, externalID, branch, sha string) *github.CheckRunEvent {
	return &github.CheckRunEvent{Action: github.String(action), Installation: inst(), Repo: repository(repo),
		Sender: &github.User{Login: github.String("alice")},
		CheckRun: &github.CheckRun{ID: github.Int64(5), ExternalID: github.String(externalID), HeadSHA: github.String(sha),
			CheckSuite: &github.CheckSuite{HeadBranch: github.String(branch)}}}
}

func TestCheckRun(t *testing.T) {
	devCheck := reconcile.CheckExternalID(plane, "dev")
	promoteAction := func(ev *github.CheckRunEvent) *github.CheckRunEvent {
		ev.RequestedAction = &github.RequestedAction{Identifier: promote.PromoteAction}
		return ev
	}
	cases := map[string]struct {
		event *github.CheckRunEvent
		want  []string
	}{
		"re-run on an environment branch": {checkRunEvent("rerequested", plane, devCheck, "dev", "d1"), []string{
			"reconcile dev", "report dev on org/cp@dev d1 [dev: org/cp@dev:] rerun failure=false"}},
		"re-run on a workload commit": {checkRunEvent("rerequested", svc, devCheck, "main", "w1"), []string{
			"reconcile dev", "report dev on team/svc@main w1 [main: team/svc@main:] rerun failure=false"}},
		"re-run on main validates it": {checkRunEvent("rerequested", plane, devCheck, "main", "m1"), []string{
			"validate dev at m1", "report dev on org/cp@main m1 [main@m1:] rerun failure=false"}},
		"re-run of an environment no longer known": {checkRunEvent("rerequested", plane, reconcile.CheckExternalID(plane, "qa"), "qa", "q1"), nil},
		"re-run of someone else's check":           {checkRunEvent("rerequested", plane, "ci:build", "dev", "d1"), nil},
		"the Promote button": {promoteAction(checkRunEvent("requested_action", plane, "kalypso-promote:org/cp:stage:m1", "main", "m1")), []string{
			"approve org/cp run 5 by alice"}},
		"another button": {func() *github.CheckRunEvent {
			ev := checkRunEvent("requested_action", plane, "x", "main", "m1")
			ev.RequestedAction = &github.RequestedAction{Identifier: "other"}
			return ev
		}(), nil},
		"created": {checkRunEvent("created", plane, devCheck, "dev", "d1"), nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			require.NoError(t, CheckRun{Core: f.core()}.Handle(context.Background(), "check_run", "d", payload(t, tc.event)))
			require.Equal(t, tc.want, f.log)
		})
	}
	f := newFake()
	require.Error(t, CheckRun{Core: f.core()}.Handle(context.Background(), "check_run", "d", []byte("{")))
	f.failIdx = errors.New("index")
	require.ErrorIs(t, CheckRun{Core: f.core()}.Handle(context.Background(), "check_run", "d", payload(t, checkRunEvent("rerequested", plane, devCheck, "dev", "d1"))), f.failIdx)
	require.Equal(t, []string{"check_run"}, CheckRun{}.Handles())
}

func TestPullRequest(t *testing.T) {
	event := func(action string, merged bool) *github.PullRequestEvent {
		return &github.PullRequestEvent{Action: github.String(action), Installation: inst(), Repo: repository(gitopsR),
			PullRequest: &github.PullRequest{Number: github.Int(3), Merged: github.Bool(merged)}}
	}
	cases := map[string]struct {
		event *github.PullRequestEvent
		want  []string
	}{
		"merged":             {event("closed", true), []string{"merged org/gitops #3"}},
		"closed, not merged": {event("closed", false), nil},
		"opened":             {event("opened", false), nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			require.NoError(t, PullRequest{Core: f.core()}.Handle(context.Background(), "pull_request", "d", payload(t, tc.event)))
			require.Equal(t, tc.want, f.log)
		})
	}
	require.Error(t, PullRequest{Core: newFake().core()}.Handle(context.Background(), "pull_request", "d", []byte("[")))
	require.Equal(t, []string{"pull_request"}, PullRequest{}.Handles())
}

func TestStatusWakesTheWaits(t *testing.T) {
	f := newFake()
	require.NoError(t, Status{Core: f.core()}.Handle(context.Background(), "status", "d", []byte(`{}`)))
	require.Equal(t, []string{"wake"}, f.log)
	require.Equal(t, []string{"status"}, Status{}.Handles())
}

func TestResync(t *testing.T) {
	f := newFake()
	f.failEnv["stage"] = errors.New("boom")
	err := f.core().Resync(context.Background(), []int64{42, 43})
	require.ErrorContains(t, err, "environment stage of org/cp: boom")
	require.Equal(t, []string{
		"forget 42", "reconcile dev", "reconcile stage", "resume 42",
		"forget 43", "reconcile dev", "reconcile stage", "resume 43",
	}, f.log, "every environment of every installation, never reported on a commit")

	f = newFake()
	f.failIdx = errors.New("index")
	f.failProm = errors.New("resume")
	err = f.core().Resync(context.Background(), []int64{42})
	require.ErrorIs(t, err, f.failIdx)
	require.Equal(t, []string{"forget 42"}, f.log)
}
