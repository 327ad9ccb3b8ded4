// Package handlers decides what work each webhook names, and does that work.
//
// Events name work; workers read state. A delivery is routed, without any I/O, to keys of the
// work queue (route.go and one file per event): a branch that changed, a pull request to
// preview, a promotion to look at. The workers (work.go and one file per kind of key) read
// the current state from GitHub and git — branch heads, pins, pull request heads — never the
// event's commit, so that a late, repeated, reordered or lost event changes nothing in the end.
package handlers

import (
	"context"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/coord"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// Reconciler computes environments and reports them on commits (see reconcile.Reconciler).
type Reconciler interface {
	Environment(ctx context.Context, env envref.Env) (*reconcile.Outcome, error)
	Validate(ctx context.Context, env envref.Env, main string) (*reconcile.Outcome, error)
	Report(ctx context.Context, c reconcile.Commit, out *reconcile.Outcome, failure error) error
	MainHead(ctx context.Context, inst int64, cp envref.Repo) (string, error)
	CachedHead(repo envref.Repo, branch string) string
}

// Index knows the environments of each installation (see envref.Index).
type Index interface {
	Declared(repo envref.Repo) bool
	Environments(ctx context.Context, inst int64) ([]envref.EnvInfo, error)
	Matching(ctx context.Context, inst int64, keep func(envref.EnvInfo) bool) ([]envref.EnvInfo, error)
	IsControlPlane(ctx context.Context, inst int64, repo envref.Repo) (bool, error)
	Refresh(ctx context.Context, inst int64, repo envref.Repo) error
	Rebuild(ctx context.Context, inst int64) error
	Forget(inst int64)
}

// Promoter runs promotions (see promote.Promoter).
type Promoter interface {
	PromoteMain(ctx context.Context, main promote.Locator) error
	Approve(ctx context.Context, inst int64, repo envref.Repo, event *github.CheckRun, user string) error
	// Override handles a click on Override window (see promote.Promoter.Override).
	Override(ctx context.Context, inst int64, repo envref.Repo, event *github.CheckRun, user string) error
	// RollBackClick handles a click on Roll back (see promote.Promoter.RollBackClick).
	RollBackClick(ctx context.Context, inst int64, repo envref.Repo, event *github.CheckRun, user string) error
	Converge(ctx context.Context, info envref.EnvInfo) (time.Duration, error)
	Waiting(inst int64) []envref.Env
}

// Previewer previews pull requests (see reconcile.Reconciler.Preview).
type Previewer interface {
	Preview(ctx context.Context, env envref.Env, pr reconcile.PullRequest, as reconcile.PreviewTarget) (*reconcile.Preview, error)
	ReportPreview(ctx context.Context, pr reconcile.PullRequest, env envref.Env, p *reconcile.Preview, failure error) (*github.CheckRun, error)
	ReportPreviewRefused(ctx context.Context, pr reconcile.PullRequest, env envref.Env, title, why string) (*github.CheckRun, error)
	CommentPreviews(ctx context.Context, pr reconcile.PullRequest, lines []reconcile.PreviewLine) error
	AcceptBlastRadius(ctx context.Context, inst int64, repo envref.Repo, run *github.CheckRun, user string) (*reconcile.Acceptance, error)
	Audience(ctx context.Context, pr reconcile.PullRequest) reconcile.Audience
	ReadPullRequest(ctx context.Context, inst int64, repo envref.Repo, number int) (reconcile.PullRequest, bool, error)
	ApproveFullPreview(ctx context.Context, inst int64, repo envref.Repo, run *github.CheckRun, user string) (*reconcile.Approval, error)
}

// Queue takes work: keys with what their next run must do (the app's work queues).
type Queue interface {
	Add(ctx context.Context, key workq.Key, need workq.Need) error
}

// Identity is how the app recognises its own writes in the events they cause: check runs of
// its App ID, and everything its bot user sends (its pushes, pull requests and statuses).
type Identity struct {
	AppID int64
	Bot   func() string // the App's bot login ("<slug>[bot]"), "" while unknown
}

// Core is what the handlers share: the reconciler, the repository index and the promoter, and
// the previewer of pull requests (nil: pull requests are not previewed), which also keeps one
// comment per pull request when PreviewComments is set; the queue work goes to; who the app is.
type Core struct {
	Reconciler      Reconciler
	Index           Index
	Promoter        Promoter
	Audit           audit.Appender // the audit trail of decisions; nil: none
	Previews        Previewer
	PreviewComments bool
	// PreviewBudget bounds the previews per pull request author (nil: no bound).
	PreviewBudget *Budget
	Queue         Queue
	Self          Identity
	// Installations lists the App's installations, for the resync.
	Installations func(ctx context.Context) ([]int64, error)
	// Leases makes one replica resync each installation per ResyncTTL (Holder is this replica).
	Leases    coord.Leases
	Holder    string
	ResyncTTL time.Duration
}
