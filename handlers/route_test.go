package handlers

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

const bot = "kalypso[bot]"

func pushEvent(repo envref.Repo, ref, sha string, files ...string) *github.PushEvent {
	return &github.PushEvent{Ref: github.String(ref), After: github.String(sha), Installation: inst(),
		Repo:    &github.PushEventRepository{Owner: &github.User{Name: github.String(repo.Owner)}, Name: github.String(repo.Name)},
		Commits: []*github.HeadCommit{{Modified: files}}, Sender: &github.User{Login: github.String("alice")}}
}

func checkRunEvent(action string, repo envref.Repo, externalID, branch, sha string) *github.CheckRunEvent {
	return &github.CheckRunEvent{Action: github.String(action), Installation: inst(), Repo: repository(repo),
		Sender: &github.User{Login: github.String("alice")},
		CheckRun: &github.CheckRun{ID: github.Int64(5), ExternalID: github.String(externalID), HeadSHA: github.String(sha),
			CheckSuite: &github.CheckSuite{HeadBranch: github.String(branch)}, App: &github.App{ID: github.Int64(7)}}}
}

func pullEvent(repo envref.Repo, action, state, base string, merged bool) *github.PullRequestEvent {
	return &github.PullRequestEvent{Action: github.String(action), Installation: inst(), Repo: repository(repo),
		Sender: &github.User{Login: github.String("alice")},
		PullRequest: &github.PullRequest{Number: github.Int(7), State: github.String(state), Merged: github.Bool(merged),
			Base: &github.PullRequestBranch{Ref: github.String(base)}}}
}

// routed routes an event and returns the keys it added, as text, with their needs.
func routed(t *testing.T, f *fake, event string, ev any) (keys []string, echo bool) {
	t.Helper()
	q := &queued{}
	c := f.core()
	c.Queue = q
	c.Self = Identity{AppID: 7, Bot: func() string { return bot }}
	echo, err := c.Route(context.Background(), event, payload(t, ev))
	require.NoError(t, err)
	for i, k := range q.keys {
		s := k.String()
		if k.Lane == workq.LanePreview {
			s += " (preview lane)"
		}
		if r, ok := q.needs[i].(Reports); ok {
			for _, rb := range r.sorted() {
				s += " report " + rb.Repo.String() + "@" + rb.Branch
				if r[rb] {
					s += " rerun"
				}
			}
		}
		keys = append(keys, s)
	}
	return keys, echo
}

func TestRouting(t *testing.T) {
	devCheck := reconcile.CheckExternalID(plane, "dev")
	deleted := pushEvent(plane, "refs/heads/dev", "0000")
	deleted.Deleted = github.Bool(true)
	promoteClick := checkRunEvent("requested_action", plane, "kalypso-promote:org/cp:stage:m1", "main", "m1")
	promoteClick.RequestedAction = &github.RequestedAction{Identifier: promote.PromoteAction}
	acceptClick := checkRunEvent("requested_action", plane, devCheck, "dev", "d1")
	acceptClick.RequestedAction = &github.RequestedAction{Identifier: reconcile.AcceptAction}
	otherButton := checkRunEvent("requested_action", plane, devCheck, "dev", "d1")
	otherButton.RequestedAction = &github.RequestedAction{Identifier: "other"}
	previewRerun := checkRunEvent("rerequested", plane, reconcile.PreviewExternalID(plane, "dev"), "feature", "p1")
	previewRerun.CheckRun.PullRequests = []*github.PullRequest{{Number: github.Int(9)}, {Number: github.Int(10)}}
	baseChanged := pullEvent(plane, "edited", "open", "stage", false)
	baseChanged.Changes = &github.EditChange{Base: &github.EditBase{Ref: &github.EditRef{From: github.String("dev")}}}
	cases := map[string]struct {
		event string
		ev    any
		want  []string
	}{
		"a push names its branch":   {"push", pushEvent(plane, "refs/heads/dev", "d1"), []string{"branch/42/org/cp/dev"}},
		"a workload push":           {"push", pushEvent(svc, "refs/heads/main", "w1"), []string{"branch/42/team/svc/main"}},
		"a tag":                     {"push", pushEvent(plane, "refs/tags/v1", "t1"), nil},
		"a deleted branch":          {"push", deleted, nil},
		"re-run on a branch":        {"check_run", checkRunEvent("rerequested", svc, devCheck, "main", "w1"), []string{"environment/42/org/cp/dev report team/svc@main rerun"}},
		"re-run on main":            {"check_run", checkRunEvent("rerequested", plane, devCheck, "main", "m1"), []string{"main/42/org/cp report org/cp@main rerun"}},
		"re-run of someone's check": {"check_run", checkRunEvent("rerequested", plane, "ci:build", "dev", "d1"), nil},
		"re-run of a preview":       {"check_run", previewRerun, []string{"preview/42/org/cp/9 (preview lane)", "preview/42/org/cp/10 (preview lane)"}},
		"the Promote button":        {"check_run", promoteClick, []string{"click/42/org/cp/5/promote"}},
		"the Accept button":         {"check_run", acceptClick, []string{"click/42/org/cp/5/kalypso-accept"}},
		"another button":            {"check_run", otherButton, nil},
		"a pull request opened":     {"pull_request", pullEvent(plane, "opened", "open", "dev", false), []string{"preview/42/org/cp/7 (preview lane)"}},
		"pushed to":                 {"pull_request", pullEvent(svc, "synchronize", "open", "main", false), []string{"preview/42/team/svc/7 (preview lane)"}},
		"its base changed":          {"pull_request", baseChanged, []string{"preview/42/org/cp/7 (preview lane)"}},
		"its title changed":         {"pull_request", pullEvent(plane, "edited", "open", "dev", false), nil},
		"closed":                    {"pull_request", pullEvent(plane, "closed", "closed", "dev", false), nil},
		"merged: its base moved":    {"pull_request", pullEvent(gitopsR, "closed", "closed", "dev", true), []string{"branch/42/org/gitops/dev"}},
		"a cluster's status":        {"status", &github.StatusEvent{Installation: inst(), Sender: &github.User{Login: github.String("flux")}}, []string{"promotion/42/org/cp/dev"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			f.waiting = []envref.Env{envInfo("dev").Env}
			keys, echo := routed(t, f, tc.event, tc.ev)
			require.False(t, echo)
			require.Equal(t, tc.want, keys)
			require.Empty(t, f.lines(), "routing does no work")
		})
	}
}

// The events the app's own writes cause name no work: its pushes (kalypso/<env>, pins), its
// pull requests, its check runs and its statuses.
func TestEchoesNameNoWork(t *testing.T) {
	fromBot := func(u **github.User) { *u = &github.User{Login: github.String(bot), Type: github.String("Bot")} }
	push := pushEvent(gitopsR, "refs/heads/kalypso/dev", "k1")
	fromBot(&push.Sender)
	pin := pushEvent(plane, "refs/heads/dev", "p1")
	fromBot(&pin.Sender)
	pr := pullEvent(gitopsR, "synchronize", "open", "dev", false)
	fromBot(&pr.Sender)
	status := &github.StatusEvent{Installation: inst()}
	fromBot(&status.Sender)
	created := checkRunEvent("created", plane, reconcile.CheckExternalID(plane, "dev"), "dev", "d1")
	completed := checkRunEvent("completed", plane, reconcile.CheckExternalID(plane, "dev"), "dev", "d1")
	for name, tc := range map[string]struct {
		event string
		ev    any
	}{
		"its push of kalypso/dev": {"push", push}, "its pin": {"push", pin}, "its pull request": {"pull_request", pr},
		"its status": {"status", status}, "its check run created": {"check_run", created}, "its check run completed": {"check_run", completed},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			f.waiting = []envref.Env{envInfo("dev").Env}
			keys, echo := routed(t, f, tc.event, tc.ev)
			require.True(t, echo)
			require.Empty(t, keys)
		})
	}
	other := checkRunEvent("completed", plane, "ci:build", "dev", "d1")
	other.CheckRun.App.ID = github.Int64(99)
	keys, echo := routed(t, newFake(), "check_run", other)
	require.False(t, echo, "another App's check run is not ours")
	require.Empty(t, keys)
}

func TestRoutingInstallationEvents(t *testing.T) {
	require.Contains(t, (&Core{}).Events(), "installation_repositories")
	for name, indexed := range map[string]bool{
		"installation.created.json": true, "installation_repositories.added.json": true,
		"installation.deleted.json": false, "installation_repositories.removed.json": true,
	} {
		data, err := os.ReadFile("../internal/githubsim/payloads/" + name)
		require.NoError(t, err, name)
		f := newFake()
		q := &queued{}
		c := f.core()
		c.Queue = q
		_, err = c.Route(context.Background(), strings.SplitN(name, ".", 2)[0], data)
		require.NoError(t, err)
		if indexed {
			require.Len(t, q.keys, 1, name)
			require.Equal(t, KindIndex, q.keys[0].Kind, name)
			require.Equal(t, IndexNeed{Resync: true}, q.needs[0], "its repositories are read again and resynced")
			continue
		}
		require.Empty(t, q.keys, name)
		require.Len(t, f.lines(), 1, "an uninstalled App is forgotten")
	}
	_, err := newFake().core().Route(context.Background(), "push", []byte("{"))
	require.ErrorContains(t, err, "parse push event")
}
