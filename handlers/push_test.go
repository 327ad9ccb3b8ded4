package handlers

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

func pushEvent(repo envref.Repo, ref, sha string, files ...string) *github.PushEvent {
	return &github.PushEvent{Ref: github.String(ref), After: github.String(sha), Installation: inst(),
		Repo:    &github.PushEventRepository{Owner: &github.User{Name: github.String(repo.Owner)}, Name: github.String(repo.Name)},
		Commits: []*github.HeadCommit{{Modified: files}}}
}

func TestPush(t *testing.T) {
	cases := map[string]struct {
		event *github.PushEvent
		edit  func(f *fake)
		want  []string
	}{
		"an environment branch": {pushEvent(plane, "refs/heads/dev", "d1"), nil, []string{
			"refresh org/cp",
			"reconcile dev", "report dev on org/cp@dev d1 [dev: org/cp@dev:] failure=false",
		}},
		"a workload branch": {pushEvent(svc, "refs/heads/main", "w1"), nil, []string{
			"refresh team/svc",
			"reconcile dev", "report dev on team/svc@main w1 [main: team/svc@main:] failure=false",
			"reconcile stage", "report stage on team/svc@main w1 [main: team/svc@main:] failure=false",
			// a workload repository's main is not a control plane: nothing is promoted
		}},
		"a GitOps branch: reconciled, not reported there": {pushEvent(gitopsR, "refs/heads/dev", "g1"), nil, []string{"reconcile dev"}},
		"an unrelated branch":                             {pushEvent(stranger, "refs/heads/feature", "x1"), nil, nil},
		"a tag":                                           {pushEvent(plane, "refs/tags/v1", "t1"), nil, nil},
		"a deleted branch": {func() *github.PushEvent {
			ev := pushEvent(plane, "refs/heads/dev", "0000")
			ev.Deleted = github.Bool(true)
			return ev
		}(), nil, nil},
		"main, valid everywhere: promoted": {pushEvent(plane, "refs/heads/main", "m1"), nil, []string{
			"refresh org/cp",
			"validate dev at m1", "report dev on org/cp@main m1 [main@m1:] failure=false",
			"validate stage at m1", "report stage on org/cp@main m1 [main@m1:] failure=false",
			"promote org/cp m1 installation 42",
		}},
		"main with an error: reported, not promoted": {pushEvent(plane, "refs/heads/main", "m1"), func(f *fake) { f.errors["stage"] = 1 }, []string{
			"refresh org/cp",
			"validate dev at m1", "report dev on org/cp@main m1 [main@m1:] failure=false",
			"validate stage at m1", "report stage on org/cp@main m1 [main@m1:] failure=false",
		}},
		"main that cannot be validated: reported as failed, not promoted": {pushEvent(plane, "refs/heads/main", "m1"), func(f *fake) { f.failEnv["dev"] = errors.New("boom") }, []string{
			"refresh org/cp",
			"validate dev at m1", "report dev on org/cp@main m1 [main@m1:] failure=true",
			"validate stage at m1", "report stage on org/cp@main m1 [main@m1:] failure=false",
		}},
		"an environment that fails is reported, the others still run": {pushEvent(svc, "refs/heads/main", "w1"), func(f *fake) { f.failEnv["dev"] = errors.New("boom") }, []string{
			"refresh team/svc",
			"reconcile dev", "report dev on team/svc@main w1 [main: team/svc@main:] failure=true",
			"reconcile stage", "report stage on team/svc@main w1 [main: team/svc@main:] failure=false",
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			if tc.edit != nil {
				tc.edit(f)
			}
			err := Push{Core: f.core()}.Handle(context.Background(), "push", "d", payload(t, tc.event))
			// A reconcile that fails is an error of the event; a validation that fails is a
			// check run on the commit.
			if len(f.failEnv) > 0 && !strings.Contains(name, "validated") {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.want, f.log)
		})
	}
}

func TestPushToMainOfAnUndeclaredRepositoryThatDeclaresEnvironments(t *testing.T) {
	f := newFake()
	ev := pushEvent(stranger, "refs/heads/main", "s1", ".environments/dev.yaml")
	require.NoError(t, Push{Core: f.core()}.Handle(context.Background(), "push", "d", payload(t, ev)))
	require.Equal(t, []string{"refresh org/other"}, f.log, "nothing of an undeclared repository is validated or promoted")
	require.True(t, declaresEnvironments(ev))
	require.False(t, declaresEnvironments(pushEvent(stranger, "refs/heads/main", "s1", "README.md")))
}

func TestPushFailures(t *testing.T) {
	f := newFake()
	f.failIdx = errors.New("index")
	require.ErrorIs(t, Push{Core: f.core()}.Handle(context.Background(), "push", "d", payload(t, pushEvent(plane, "refs/heads/dev", "d1"))), f.failIdx)
	f = newFake()
	f.failProm = errors.New("promote")
	require.ErrorIs(t, Push{Core: f.core()}.Handle(context.Background(), "push", "d", payload(t, pushEvent(plane, "refs/heads/main", "m1"))), f.failProm)
	require.Error(t, Push{Core: f.core()}.Handle(context.Background(), "push", "d", []byte("{")))
	require.Equal(t, []string{"push"}, Push{}.Handles())
}
