package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/coord"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// Each push names its branch; the work reads what the branch's readers read now and reports on
// the heads it read, never on the event's commit.
func TestPushWork(t *testing.T) {
	cases := map[string]struct {
		event *github.PushEvent
		edit  func(f *fake)
		want  []string
	}{
		"an environment branch": {pushEvent(plane, "refs/heads/dev", "d1"), nil, []string{
			"refresh org/cp", "reconcile dev", "report dev on org/cp@dev head-of-dev [dev: org/cp@dev:] failure=false",
		}},
		"a workload branch": {pushEvent(svc, "refs/heads/main", "w1"), nil, []string{
			"refresh team/svc",
			"reconcile dev", "report dev on team/svc@main head-of-svc [main: team/svc@main:] failure=false",
			"reconcile stage", "report stage on team/svc@main head-of-svc [main: team/svc@main:] failure=false",
		}},
		"a GitOps branch: reconciled, not reported there; its promotion looks": {pushEvent(gitopsR, "refs/heads/dev", "g1"), nil, []string{
			"reconcile dev", "promotion dev"}},
		"an unrelated branch": {pushEvent(stranger, "refs/heads/feature", "x1"), nil, nil},
		"main, valid everywhere: its head is promoted": {pushEvent(plane, "refs/heads/main", "m1"), nil, []string{
			"refresh org/cp",
			"validate dev at head-of-main", "report dev on org/cp@main head-of-main [main@head-of:] failure=false",
			"validate stage at head-of-main", "report stage on org/cp@main head-of-main [main@head-of:] failure=false",
			"promote org/cp head-of-main installation 42",
		}},
		"main with an error: reported, not promoted": {pushEvent(plane, "refs/heads/main", "m1"), func(f *fake) { f.errors["stage"] = 1 }, []string{
			"refresh org/cp",
			"validate dev at head-of-main", "report dev on org/cp@main head-of-main [main@head-of:] failure=false",
			"validate stage at head-of-main", "report stage on org/cp@main head-of-main [main@head-of:] failure=false",
		}},
		"main of an undeclared repository": {pushEvent(stranger, "refs/heads/main", "s1", ".environments/dev.yaml"), nil, []string{"refresh org/other"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			if tc.edit != nil {
				tc.edit(f)
			}
			r := run(t, f.core(), 1)
			require.NoError(t, r.route("push", tc.event))
			require.Equal(t, tc.want, f.lines())
		})
	}
	require.True(t, declaresEnvironments(payload(t, pushEvent(stranger, "refs/heads/main", "s1", ".environments/dev.yaml"))))
	require.False(t, declaresEnvironments(payload(t, pushEvent(stranger, "refs/heads/main", "s1", "README.md"))))
}

// A burst of pushes to one branch while the work waits is one reconcile per environment,
// reported on the newest head.
func TestABurstOfPushesIsOneReconcilePerEnvironment(t *testing.T) {
	f := newFake()
	c := f.core()
	q := workq.New(context.Background(), "test", c.Work)
	c.Queue = oneLane{q}
	done := make(chan error, 1)
	round := workq.NewRound(func(err error) { done <- err })
	ctx := workq.WithRound(context.Background(), round)
	for i := range 500 {
		_, err := c.Route(ctx, "push", payload(t, pushEvent(svc, "refs/heads/main", fmt.Sprintf("w%d", i))))
		require.NoError(t, err)
	}
	round.Release(nil)
	q.Start()
	require.NoError(t, <-done)
	require.NoError(t, q.Stop(context.Background()))
	require.Equal(t, []string{"refresh team/svc",
		"reconcile dev", "report dev on team/svc@main head-of-svc [main: team/svc@main:] failure=false",
		"reconcile stage", "report stage on team/svc@main head-of-svc [main: team/svc@main:] failure=false"}, f.lines())
}

// A reconcile that fails is retried; when it fails for good, its failure is reported on the
// heads the cache last saw.
func TestAFailingReconcileIsRetriedThenReported(t *testing.T) {
	f := newFake()
	f.failEnv["dev"] = errors.New("boom")
	r := run(t, f.core(), 3)
	err := r.route("push", pushEvent(plane, "refs/heads/dev", "d1"))
	require.ErrorContains(t, err, "environment dev of org/cp: boom")
	require.Equal(t, []string{"refresh org/cp", "reconcile dev", "reconcile dev", "reconcile dev",
		"report dev on org/cp@dev cached-dev [dev: org/cp@dev:] failure=true"}, f.lines())
}

func TestCheckRunWork(t *testing.T) {
	devCheck := reconcile.CheckExternalID(plane, "dev")
	promoteClick := checkRunEvent("requested_action", plane, "kalypso-promote:org/cp:stage:m1", "main", "m1")
	promoteClick.RequestedAction = &github.RequestedAction{Identifier: promote.PromoteAction}
	cases := map[string]struct {
		event *github.CheckRunEvent
		want  []string
	}{
		"re-run on an environment branch": {checkRunEvent("rerequested", plane, devCheck, "dev", "d1"), []string{
			"reconcile dev", "report dev on org/cp@dev head-of-dev [dev: org/cp@dev:] rerun failure=false"}},
		"re-run on main validates its head": {checkRunEvent("rerequested", plane, devCheck, "main", "m1"), []string{
			"validate dev at head-of-main", "report dev on org/cp@main head-of-main [main@head-of:] rerun failure=false",
			"validate stage at head-of-main", "report stage on org/cp@main head-of-main [main@head-of:] rerun failure=false",
			"promote org/cp head-of-main installation 42"}},
		"re-run of an environment no longer known": {checkRunEvent("rerequested", plane, reconcile.CheckExternalID(plane, "qa"), "qa", "q1"), nil},
		"the Promote button":                       {promoteClick, []string{"approve org/cp run 5 by alice"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			r := run(t, f.core(), 1)
			require.NoError(t, r.route("check_run", tc.event))
			require.Equal(t, tc.want, f.lines())
		})
	}
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
	r := run(t, f.core(), 1)
	require.NoError(t, r.route("check_run", click("reader", "Kalypso / dev")))
	require.Equal(t, []string{"accept org/cp run 5 by reader"}, f.lines(), "a refused click changes nothing")
	require.NoError(t, r.route("check_run", click("writer", "Kalypso / dev")))
	require.Equal(t, []string{"accept org/cp run 5 by writer", "reconcile dev", "report dev on org/cp@dev head-of-dev [dev: org/cp@dev:] failure=false"}, f.lines(),
		"an accepted environment check pushes the held change")
	require.NoError(t, r.route("check_run", click("writer", "Kalypso preview / dev")))
	require.Equal(t, []string{"accept org/cp run 5 by writer"}, f.lines(), "an accepted preview pushes nothing")
}

func TestClicksCoalesceOnePerUser(t *testing.T) {
	run := &github.CheckRun{ID: github.Int64(5)}
	got := Clicks{{User: "a", Run: run}, {User: "b", Run: run}}.Merge(Clicks{{User: "a", Run: run}}).(Clicks)
	require.Equal(t, []string{"b", "a"}, []string{got[0].User, got[1].User}, "a user's newer click replaces the older")
	var many Clicks
	for i := range 40 {
		many = many.Merge(Clicks{{User: fmt.Sprint(i), Run: run}}).(Clicks)
	}
	require.Len(t, many, maxClicks)
}

// The resync makes every kind of work of every installation due: main validated and pinned,
// each environment reported on the head of every branch it reads, each promotion looked at.
func TestResync(t *testing.T) {
	f := newFake()
	f.held = map[string]bool{"dev": true}
	c := f.core()
	c.Installations = func(context.Context) ([]int64, error) { return []int64{42, 43}, nil }
	leases := coord.NewLocal()
	ok, err := leases.TryAcquire(context.Background(), ResyncLease(43), "another replica", time.Hour)
	require.NoError(t, err)
	require.True(t, ok)
	c.Leases, c.Holder, c.ResyncTTL = leases, "this replica", time.Hour
	r := run(t, c, 1)
	require.NoError(t, r.do(c.Resync))
	require.Equal(t, []string{
		"rebuild 42",
		"validate dev at head-of-main", "report dev on org/cp@main head-of-main [main@head-of:] failure=false",
		"validate stage at head-of-main", "report stage on org/cp@main head-of-main [main@head-of:] failure=false",
		"promote org/cp head-of-main installation 42",
		"reconcile dev", "report dev on org/cp@dev head-of-dev [dev: org/cp@dev:] failure=false",
		"report dev on team/svc@main head-of-svc [main: team/svc@main:] failure=false",
		"promotion dev",
		"reconcile stage", "report stage on org/cp@stage head-of-stage [stage: org/cp@stage:] failure=false",
		"report stage on team/svc@main head-of-svc [main: team/svc@main:] failure=false",
		"promotion stage",
	}, f.lines(), "installation 43 is resynced by the replica holding its lease")
}

// A held change is offered for acceptance on the environment branch's head commit, also when
// a workload push found it.
func TestHeldChangeIsReportedOnTheEnvironmentCommit(t *testing.T) {
	f := newFake()
	f.held = map[string]bool{"dev": true}
	r := run(t, f.core(), 1)
	require.NoError(t, r.route("push", pushEvent(svc, "refs/heads/main", "w1")))
	require.Contains(t, f.lines(), "report dev on org/cp@dev head-of-dev [dev: org/cp@dev:] failure=false")
}

// A promotion that waits for its clusters runs again after the poll it asks for; a cluster's
// status makes it look at once.
func TestPromotionWork(t *testing.T) {
	f := newFake()
	f.again = time.Millisecond
	r := run(t, f.core(), 1)
	require.NoError(t, r.do(func(ctx context.Context) error {
		return r.c.Queue.Add(ctx, PromotionKey(envInfo("dev").Env), nil)
	}))
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.log) >= 3
	}, 10*time.Second, time.Millisecond, "it polls again")
	f.mu.Lock()
	f.again = 0
	f.mu.Unlock()
}

func TestPreviewWork(t *testing.T) {
	sha := strings.Repeat("a", 40)
	pr := func(state, base, author string) *github.PullRequest {
		return &github.PullRequest{Number: github.Int(7), State: github.String(state), User: &github.User{Login: github.String(author)},
			Head: &github.PullRequestBranch{SHA: github.String(sha)}, Base: &github.PullRequestBranch{Ref: github.String(base)}}
	}
	opened := pullEvent(plane, "opened", "open", "dev", false)
	cases := map[string]struct {
		repo envref.Repo
		pr   *github.PullRequest
		want []string
	}{
		"into an environment branch, at its current head": {plane, pr("open", "dev", "a"), []string{"read org/cp#7",
			"preview dev of org/cp#7 at " + sha + " as 0", "report preview dev on " + sha + " failure=false"}},
		"into main, every environment": {plane, pr("open", "main", "a"), []string{"read org/cp#7",
			"preview dev of org/cp#7 at " + sha + " as 1", "report preview dev on " + sha + " failure=false",
			"preview stage of org/cp#7 at " + sha + " as 1", "report preview stage on " + sha + " failure=false"}},
		"into a workload branch": {svc, pr("open", "main", "a"), []string{"read team/svc#7",
			"preview dev of team/svc#7 at " + sha + " as 2", "report preview dev on " + sha + " failure=false",
			"preview stage of team/svc#7 at " + sha + " as 2", "report preview stage on " + sha + " failure=false"}},
		"closed since": {plane, pr("closed", "dev", "a"), []string{"read org/cp#7"}},
		"gone":         {plane, nil, []string{"read org/cp#7"}},
		"another base": {plane, pr("open", "feature", "a"), []string{"read org/cp#7"}},
		"undeclared":   {stranger, pr("open", "dev", "a"), []string{"read org/other#7"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			if tc.pr != nil {
				f.pulls[7] = tc.pr
			}
			ev := pullEvent(tc.repo, "opened", "open", "dev", false)
			require.NoError(t, run(t, f.core(), 1).route("pull_request", ev))
			require.Equal(t, tc.want, f.lines())
		})
	}

	f := newFake()
	f.pulls[7] = pr("open", "dev", "mallory")
	c := f.core()
	c.PreviewComments = true
	c.PreviewBudget = NewBudget(2, nil)
	r := run(t, c, 1)
	for range 2 {
		require.NoError(t, r.route("pull_request", opened))
		require.Equal(t, "comment on #7: dev success", f.lines()[3], "one comment sums up every environment")
	}
	require.NoError(t, r.route("pull_request", opened))
	require.Equal(t, []string{"read org/cp#7", "refuse preview dev on " + sha + ": preview postponed: budget of @mallory used up"}, f.lines(),
		"the author's third preview in an hour is refused")

	f.pulls[7].Head.SHA = github.String("../x")
	require.ErrorContains(t, run(t, f.core(), 3).route("pull_request", opened), "is not a commit")
	require.Len(t, f.lines(), 1, "a head that is not a commit is not tried again")
}

func TestBudget(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	b := NewBudget(2, func() time.Time { return now })
	for range 2 {
		ok, _ := b.Take(1, "mallory")
		require.True(t, ok)
	}
	ok, next := b.Take(1, "mallory")
	require.False(t, ok)
	require.Equal(t, now.Add(time.Hour), next)
	ok, _ = b.Take(1, "alice")
	require.True(t, ok, "per author")
	ok, _ = b.Take(2, "mallory")
	require.True(t, ok, "per installation")
	now = now.Add(time.Hour)
	ok, _ = b.Take(1, "mallory")
	require.True(t, ok, "an hour later")
	var unbounded *Budget
	ok, _ = unbounded.Take(1, "x")
	require.True(t, ok)
}

func TestUnknownWork(t *testing.T) {
	err := newFake().core().Work(context.Background(), workq.Key{Kind: "nonsense"}, nil)
	require.True(t, workq.IsPermanent(err))
}

// A reconcile refused for who the environment is, not for what failed, is not tried again.
func TestAClaimedBranchIsNotRetried(t *testing.T) {
	f := newFake()
	f.failEnv["dev"] = fmt.Errorf("environment dev: %w", envref.ErrClaimed)
	err := run(t, f.core(), 5).route("push", pushEvent(plane, "refs/heads/dev", "d1"))
	require.ErrorIs(t, err, envref.ErrClaimed)
	require.Equal(t, []string{"refresh org/cp", "reconcile dev", "report dev on org/cp@dev cached-dev [dev: org/cp@dev:] failure=true"}, f.lines())
}

// A preview that cannot be computed is tried again, the pull request read anew; the last
// attempt reports the failure on the check run.
func TestAFailingPreviewIsRetriedThenReported(t *testing.T) {
	sha := strings.Repeat("a", 40)
	f := newFake()
	f.pulls[7] = &github.PullRequest{Number: github.Int(7), State: github.String("open"), User: &github.User{Login: github.String("a")},
		Head: &github.PullRequestBranch{SHA: github.String(sha)}, Base: &github.PullRequestBranch{Ref: github.String("dev")}}
	f.failEnv["dev"] = errors.New("not our ref")
	err := run(t, f.core(), 2).route("pull_request", pullEvent(plane, "opened", "open", "dev", false))
	require.NoError(t, err, "the failure is on the check run")
	require.Equal(t, []string{"read org/cp#7", "preview dev of org/cp#7 at " + sha + " as 0",
		"read org/cp#7", "preview dev of org/cp#7 at " + sha + " as 0", "report preview dev on " + sha + " failure=true"}, f.lines())
}

func TestARunsAuditDecisionsNameWhatMadeItDue(t *testing.T) {
	key := EnvironmentKey(envref.Env{Installation: 1, ControlPlane: envref.Repo{Owner: "o", Name: "cp"}, Name: "dev"})
	for _, origin := range []string{"0b9c1f1e-delivery", workq.OriginResync, workq.OriginPoll} {
		ctx := workContext(workq.WithOrigin(context.Background(), origin), key)
		require.Equal(t, origin, audit.DeliveryOf(ctx))
	}
	require.Empty(t, audit.DeliveryOf(workContext(context.Background(), key)), "no origin, no delivery")
}
