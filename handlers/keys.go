package handlers

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// The kinds of work. Each names what its worker converges.
const (
	KindBranch        = "branch"        // a branch of a repository changed: find who reads or writes it
	KindEnvironment   = "environment"   // reconcile an environment, report on the heads that changed
	KindMain          = "main"          // validate a control plane's main and pin it forward
	KindPromotion     = "promotion"     // move the promotion into an environment on
	KindPreview       = "preview"       // preview a pull request at its current head
	KindClick         = "click"         // clicks on a button of a check run
	KindIndex         = "index"         // read an installation's repositories again
	KindInstallations = "installations" // the resync: list the installations and resync each
)

// BranchKey names a branch of a repository that changed.
func BranchKey(inst int64, repo envref.Repo, branch string) workq.Key {
	return workq.Key{Kind: KindBranch, Inst: inst, Repo: repo.String(), Name: branch}
}

// EnvironmentKey names the reconcile of an environment.
func EnvironmentKey(env envref.Env) workq.Key {
	return workq.Key{Kind: KindEnvironment, Inst: env.Installation, Repo: env.ControlPlane.String(), Name: env.Name}
}

// MainKey names the validation and pin of a control plane's main.
func MainKey(inst int64, cp envref.Repo) workq.Key {
	return workq.Key{Kind: KindMain, Inst: inst, Repo: cp.String()}
}

// PromotionKey names the promotion into an environment.
func PromotionKey(env envref.Env) workq.Key {
	return workq.Key{Kind: KindPromotion, Inst: env.Installation, Repo: env.ControlPlane.String(), Name: env.Name}
}

// PreviewKey names the preview of a pull request, in the previews' own lane.
func PreviewKey(inst int64, repo envref.Repo, number int) workq.Key {
	return workq.Key{Lane: workq.LanePreview, Kind: KindPreview, Inst: inst, Repo: repo.String(), Name: strconv.Itoa(number)}
}

// ClickKey names the clicks on one button of one check run.
func ClickKey(inst int64, repo envref.Repo, run int64, action string) workq.Key {
	return workq.Key{Kind: KindClick, Inst: inst, Repo: repo.String(), Name: strconv.FormatInt(run, 10) + "/" + action}
}

// IndexKey names the index of an installation.
func IndexKey(inst int64) workq.Key { return workq.Key{Kind: KindIndex, Inst: inst} }

// InstallationsKey names the resync of every installation.
func InstallationsKey() workq.Key { return workq.Key{Kind: KindInstallations} }

// repoOfKey reads back the repository of a key.
func repoOfKey(k workq.Key) envref.Repo {
	owner, name, _ := strings.Cut(k.Repo, "/")
	return envref.Repo{Owner: owner, Name: name}
}

// envOfKey reads back the environment of an environment or promotion key.
func envOfKey(k workq.Key) envref.Env {
	return envref.Env{Installation: k.Inst, ControlPlane: repoOfKey(k), Name: k.Name}
}

// Reports is the need of an environment or main key: the branches whose current heads get
// the check run of the environment, each with whether a user asked to run it again (a new
// check run rather than an update).
type Reports map[envref.RepoBranch]bool

// ReportOn is the need to report on the head of one branch.
func ReportOn(repo envref.Repo, branch string, rerun bool) Reports {
	return Reports{{Repo: repo, Branch: branch}: rerun}
}

// Merge implements workq.Need: every branch of both, rerun when either asks it.
func (r Reports) Merge(later workq.Need) workq.Need {
	out := maps.Clone(r)
	for k, v := range later.(Reports) {
		out[k] = out[k] || v
	}
	return out
}

// sorted lists the branches in a stable order.
func (r Reports) sorted() []envref.RepoBranch {
	return slices.SortedFunc(maps.Keys(r), func(a, b envref.RepoBranch) int {
		return strings.Compare(a.Repo.String()+"\x00"+a.Branch, b.Repo.String()+"\x00"+b.Branch)
	})
}

// IndexNeed is the need of an index key: whether every key of the installation is resynced
// after the index is read again.
type IndexNeed struct{ Resync bool }

// Merge implements workq.Need.
func (n IndexNeed) Merge(later workq.Need) workq.Need {
	return IndexNeed{Resync: n.Resync || later.(IndexNeed).Resync}
}

// maxClicks bounds the clicks on one button kept waiting: one per user, the newest.
const maxClicks = 16

// Click is one click on a check run's button, with the check run as the event showed it.
type Click struct {
	User     string
	Run      *github.CheckRun
	Delivery string // the X-GitHub-Delivery of the click, for the audit trail
}

// Clicks is the need of a click key: the clicks not handled yet, oldest first, one per user.
type Clicks []Click

// Merge implements workq.Need: a user's newer click replaces their older one.
func (c Clicks) Merge(later workq.Need) workq.Need {
	out := slices.Clone(c)
	for _, click := range later.(Clicks) {
		out = slices.DeleteFunc(out, func(o Click) bool { return o.User == click.User })
		out = append(out, click)
	}
	if len(out) > maxClicks {
		out = out[len(out)-maxClicks:]
	}
	return out
}
