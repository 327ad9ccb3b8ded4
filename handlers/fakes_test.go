package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/preview"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

var (
	plane    = envref.Repo{Owner: "org", Name: "cp"}
	svc      = envref.Repo{Owner: "team", Name: "svc"}
	gitopsR  = envref.Repo{Owner: "org", Name: "gitops"}
	stranger = envref.Repo{Owner: "org", Name: "other"}
)

func envInfo(name string) envref.EnvInfo {
	return envref.EnvInfo{Env: envref.Env{Installation: 42, ControlPlane: plane, Name: name}, Branch: name,
		GitOps: gitopsR, GitOpsBranch: name, Workloads: []envref.RepoBranch{{Repo: svc, Branch: "main"}}}
}

// fake records what the handlers ask of the reconciler, the index and the promoter, as lines.
type fake struct {
	mu       sync.Mutex
	log      []string
	envs     []envref.EnvInfo
	failEnv  map[string]error // environment → reconcile error
	errors   map[string]int   // environment → errors of its result
	held     map[string]bool  // environment → its change is held by the guard
	failIdx  error
	failProm error
	again    time.Duration // what Converge answers
	waiting  []envref.Env
	pulls    map[int]*github.PullRequest
}

func newFake() *fake {
	return &fake{envs: []envref.EnvInfo{envInfo("dev"), envInfo("stage")}, failEnv: map[string]error{}, errors: map[string]int{},
		pulls: map[int]*github.PullRequest{}}
}

func (f *fake) core() *Core { return &Core{Reconciler: f, Index: f, Promoter: f, Previews: f} }

func (f *fake) logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, fmt.Sprintf(format, args...))
}

// lines returns and forgets the lines logged so far.
func (f *fake) lines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.log
	f.log = nil
	return out
}

// result is an environment as the fake computes it: read from the head of its branch, of the
// workload branch and of main's pin.
func (f *fake) result(env string) *reconcile.Outcome {
	res := &render.Result{}
	for range f.errors[env] {
		res.Errors = append(res.Errors, &scheduling.Error{Msg: "bad"})
	}
	out := &reconcile.Outcome{Env: envref.Env{Installation: 42, ControlPlane: plane, Name: env}, Result: res,
		Sources: []scheduling.SourceCommit{{Name: env, Commit: "head-of-" + env},
			{Name: "main", Repo: "https://github.com/org/cp", Branch: "main", Commit: "pin-of-" + env},
			{Name: "workload svc", Repo: "https://github.com/team/svc", Branch: "main", Commit: "head-of-svc"}}}
	if f.held[env] {
		out.Held = []preview.Violation{{What: "removed", Measured: 3, Total: 4}}
	}
	return out
}

// MainHead implements Reconciler.
func (f *fake) MainHead(_ context.Context, _ int64, cp envref.Repo) (string, error) {
	return "head-of-main", nil
}

// CachedHead implements Reconciler.
func (f *fake) CachedHead(repo envref.Repo, branch string) string { return "cached-" + branch }

// Rebuild implements Index.
func (f *fake) Rebuild(_ context.Context, inst int64) error {
	f.logf("rebuild %d", inst)
	return f.failIdx
}

// Converge implements Promoter.
func (f *fake) Converge(_ context.Context, info envref.EnvInfo) (time.Duration, error) {
	f.logf("promotion %s", info.Env.Name)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.again, f.failProm
}

// Waiting implements Promoter.
func (f *fake) Waiting(int64) []envref.Env { return f.waiting }

// ReportPreviewRefused implements Previewer.
func (f *fake) ReportPreviewRefused(_ context.Context, pr reconcile.PullRequest, env envref.Env, title, _ string) (*github.CheckRun, error) {
	f.logf("refuse preview %s on %s: %s", env.Name, pr.HeadSHA, title)
	return &github.CheckRun{Conclusion: github.String("neutral")}, nil
}

// Environment implements Reconciler.
func (f *fake) Environment(_ context.Context, env envref.Env) (*reconcile.Outcome, error) {
	f.logf("reconcile %s", env.Name)
	if err := f.failEnv[env.Name]; err != nil {
		return nil, err
	}
	return f.result(env.Name), nil
}

// Validate implements Reconciler.
func (f *fake) Validate(_ context.Context, env envref.Env, main string) (*reconcile.Outcome, error) {
	f.logf("validate %s at %s", env.Name, main)
	if err := f.failEnv[env.Name]; err != nil {
		return nil, err
	}
	return f.result(env.Name), nil
}

// Report implements Reconciler.
func (f *fake) Report(_ context.Context, c reconcile.Commit, out *reconcile.Outcome, failure error) error {
	rerun := ""
	if c.Rerun {
		rerun = " rerun"
	}
	f.logf("report %s on %s@%s %s [%s]%s failure=%v", out.Env.Name, c.Repo, c.Branch, c.SHA, strings.Join(c.Prefixes, " "), rerun, failure != nil)
	return nil
}

// Declared implements Index.
func (f *fake) Declared(repo envref.Repo) bool { return repo == plane }

// Environments implements Index.
func (f *fake) Environments(context.Context, int64) ([]envref.EnvInfo, error) {
	return f.envs, f.failIdx
}

// Matching implements Index.
func (f *fake) Matching(_ context.Context, _ int64, keep func(envref.EnvInfo) bool) ([]envref.EnvInfo, error) {
	var out []envref.EnvInfo
	for _, e := range f.envs {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out, f.failIdx
}

// IsControlPlane implements Index.
func (f *fake) IsControlPlane(_ context.Context, _ int64, repo envref.Repo) (bool, error) {
	return repo == plane, f.failIdx
}

// Refresh implements Index.
func (f *fake) Refresh(_ context.Context, inst int64, repo envref.Repo) error {
	f.logf("refresh %s", repo)
	return nil
}

// Forget implements Index.
func (f *fake) Forget(inst int64) { f.logf("forget %d", inst) }

// PromoteMain implements Promoter.
func (f *fake) PromoteMain(_ context.Context, main promote.Locator) error {
	f.logf("promote %s %s installation %d", main.ControlPlane, main.Commit, main.Installation)
	return f.failProm
}

// Approve implements Promoter.
func (f *fake) Approve(_ context.Context, inst int64, repo envref.Repo, event *github.CheckRun, user string) error {
	f.logf("approve %s run %d by %s", repo, event.GetID(), user)
	return f.failProm
}

func (f *fake) RollBackClick(_ context.Context, inst int64, repo envref.Repo, event *github.CheckRun, user string) error {
	f.logf("roll back %s run %d by %s", repo, event.GetID(), user)
	return f.failProm
}

func (f *fake) Override(_ context.Context, inst int64, repo envref.Repo, event *github.CheckRun, user string) error {
	f.logf("override %s run %d by %s", repo, event.GetID(), user)
	return f.failProm
}

// payload encodes an event as GitHub sends it.
func payload(t *testing.T, ev any) []byte {
	t.Helper()
	data, err := json.Marshal(ev)
	require.NoError(t, err)
	return data
}

func inst() *github.Installation { return &github.Installation{ID: github.Int64(42)} }

func repository(r envref.Repo) *github.Repository {
	return &github.Repository{Owner: &github.User{Login: github.String(r.Owner)}, Name: github.String(r.Name)}
}

// Preview implements Previewer.
func (f *fake) Preview(_ context.Context, env envref.Env, pr reconcile.PullRequest, as reconcile.PreviewTarget) (*reconcile.Preview, error) {
	f.logf("preview %s of %s#%d at %s as %d", env.Name, pr.Repo, pr.Number, pr.HeadSHA, as)
	return &reconcile.Preview{Env: env}, f.failEnv[env.Name]
}

// ReportPreview implements Previewer.
func (f *fake) ReportPreview(_ context.Context, pr reconcile.PullRequest, env envref.Env, p *reconcile.Preview, failure error) (*github.CheckRun, error) {
	full := ""
	if pr.Audience.Full {
		full = " full"
	}
	f.logf("report preview %s on %s failure=%v%s", env.Name, pr.HeadSHA, failure != nil, full)
	return &github.CheckRun{Conclusion: github.String("success")}, nil
}

// AcceptBlastRadius implements Previewer: user "writer" is accepted, anyone else refused.
func (f *fake) AcceptBlastRadius(_ context.Context, inst int64, repo envref.Repo, run *github.CheckRun, user string) (*reconcile.Acceptance, error) {
	f.logf("accept %s run %d by %s", repo, run.GetID(), user)
	a := &reconcile.Acceptance{Env: envref.Env{Installation: inst, ControlPlane: plane, Name: "dev"}, Preview: run.GetName() != "Kalypso / dev"}
	if user == "writer" {
		a.Accepted = true
	} else {
		a.Refusal = "no write permission"
	}
	return a, nil
}

// CommentPreviews implements Previewer.
func (f *fake) CommentPreviews(_ context.Context, pr reconcile.PullRequest, lines []reconcile.PreviewLine) error {
	var envs []string
	for _, l := range lines {
		envs = append(envs, l.Env+" "+l.Conclusion)
	}
	f.logf("comment on #%d: %s", pr.Number, strings.Join(envs, ", "))
	return nil
}

// Audience implements Previewer: an author named "writer" sees everything.
func (f *fake) Audience(_ context.Context, pr reconcile.PullRequest) reconcile.Audience {
	return reconcile.Audience{Full: pr.Author.Login == "writer", Why: "not a writer"}
}

// ReadPullRequest implements Previewer from the fake's pull requests, as GitHub has them now.
func (f *fake) ReadPullRequest(_ context.Context, inst int64, repo envref.Repo, number int) (reconcile.PullRequest, bool, error) {
	f.logf("read %s#%d", repo, number)
	pr := f.pulls[number]
	if pr == nil {
		return reconcile.PullRequest{}, false, nil
	}
	return reconcile.PullRequestOf(inst, repo, pr), pr.GetState() == "open", nil
}

// ApproveFullPreview implements Previewer: user "writer" is approved (for pull request 9),
// anyone else refused.
func (f *fake) ApproveFullPreview(_ context.Context, inst int64, repo envref.Repo, run *github.CheckRun, user string) (*reconcile.Approval, error) {
	f.logf("approve full preview %s run %d by %s", repo, run.GetID(), user)
	a := &reconcile.Approval{Env: envref.Env{Installation: inst, ControlPlane: plane, Name: "dev"}, Number: 9}
	if user == "writer" {
		a.Approved = true
	} else {
		a.Refusal = "no write permission"
	}
	return a, nil
}
