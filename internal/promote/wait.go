package promote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// maxDescendants bounds how many later commits of the GitOps branch are read for reports.
const maxDescendants = 20

// deployment describes one wait for compliance: which main commit, where it was merged.
type deployment struct {
	Locator
	Stage    *scheduling.Stage
	GitOps   envref.Repo
	Branch   string    // the GitOps environment branch
	Merge    string    // the GitOps commit the pull request was merged as
	Started  time.Time // when the wait began (the timeout counts from here)
	ID       int64     // the GitHub Deployment
	expected []string
	// historyID is the deployment's record in the hub's store (0: none); detail is the
	// verdict with the gate's details, for the GitHub Deployment's status.
	historyID int64
	detail    string
}

// payload is stored in the GitHub Deployment, so later deployments know where this one landed.
type payload struct {
	GitOpsRepo   string `json:"gitops_repo"`
	GitOpsCommit string `json:"gitops_commit"`
	// Approvers are who approved a manual promotion, as its check run records them.
	Approvers []string `json:"approvers,omitempty"`
}

// waitSet is the environments whose promotion waits for clusters in this replica, so that a
// status webhook can make them look again at once; and the clusters each wait expects. It is a
// cache: a wait not in it is found again by the resync.
type waitSet struct {
	mu       sync.Mutex
	m        map[envref.Env]bool
	expected map[int64][]string // deployment → the clusters it waits for
	history  map[int64]int64    // deployment → its record in the hub's store
}

// set records whether env waits.
func (w *waitSet) set(env envref.Env, waiting bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if waiting {
		w.m[env] = true
	} else {
		delete(w.m, env)
	}
}

// Waiting returns the environments of an installation whose promotion waits for clusters in
// this replica: a cluster's report (a status webhook) makes them look again.
func (p *Promoter) Waiting(inst int64) []envref.Env {
	return p.waiting(func(e envref.Env) bool { return e.Installation == inst })
}

// waiting returns the environments waiting for clusters in this replica that keep accepts,
// in the order of their keys.
func (p *Promoter) waiting(keep func(envref.Env) bool) []envref.Env {
	p.waits.mu.Lock()
	defer p.waits.mu.Unlock()
	var out []envref.Env
	for env := range p.waits.m {
		if keep(env) {
			out = append(out, env)
		}
	}
	slices.SortFunc(out, func(a, b envref.Env) int { return strings.Compare(a.Key(), b.Key()) })
	return out
}

// maxExpected bounds the deployments whose expected clusters (or history records) are kept.
const maxExpected = 1024

// expectedOf returns the clusters a wait expects, read once per deployment.
func (p *Promoter) expectedOf(ctx context.Context, d *deployment) []string {
	p.waits.mu.Lock()
	got, ok := p.waits.expected[d.ID]
	p.waits.mu.Unlock()
	if ok {
		return got
	}
	got = p.expectedClusters(ctx, d)
	p.waits.mu.Lock()
	p.waits.expected = kept(p.waits.expected, d.ID, got)
	p.waits.mu.Unlock()
	return got
}

// historyOf returns the hub's record of a GitHub Deployment, 0 when none is known here.
func (w *waitSet) historyOf(deployment int64) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.history[deployment]
}

// keepHistory remembers the hub's record of a GitHub Deployment.
func (w *waitSet) keepHistory(deployment, record int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.history = kept(w.history, deployment, record)
}

// kept sets m[k] = v in a map of at most maxExpected entries (emptied when full).
func kept[V any](m map[int64]V, k int64, v V) map[int64]V {
	if m == nil || len(m) >= maxExpected {
		m = map[int64]V{}
	}
	m[k] = v
	return m
}

// look polls the clusters of a wait once and records what it finds: the final result, or
// the progress when it changed since the status read (current). It reports whether the wait
// is over.
func (p *Promoter) look(ctx context.Context, d *deployment, current string) (bool, error) {
	v, err := p.decide(ctx, d)
	env := envref.Env{Installation: d.Installation, ControlPlane: d.ControlPlane, Name: d.Env}
	var limit *ghport.LimitError
	if errors.As(err, &limit) { // more clusters than may be read: it can never be judged
		v = verdict{final: true, desc: limit.Error()}
	} else if err != nil {
		logger(ctx).Warn().Err(err).Str("environment", d.Env).Msg("polling cluster statuses")
	}
	if v.final {
		p.waits.set(env, false)
		p.recordFinish(ctx, d, v)
		return true, p.finish(ctx, d, v.success, v.desc)
	}
	p.waits.set(env, true)
	if v.desc != current {
		return false, p.status(ctx, d.Locator, "pending", v.desc)
	}
	return false, nil
}

// verdict is what one look at the clusters' reports decides.
type verdict struct {
	final, success bool
	desc           string
	details        string // the hub gate's details: counts, stragglers and failures
}

// judge decides a wait from the compliant clusters and the first failed one: a failure ends it,
// every expected cluster (and at least the stage's minimum) compliant ends it well, the
// timeout ends it badly; otherwise it goes on, saying how far it is. observed is false when
// the reports could not be read, which never counts as compliant.
func judge(d *deployment, now time.Time, ok []string, failed string, observed bool) verdict {
	required := max(len(d.expected), d.Stage.MinClusters)
	switch {
	case failed != "":
		return verdict{final: true, desc: failedDesc(failed)}
	case observed && len(ok) >= required && containsAll(ok, d.expected):
		return verdict{final: true, success: true, desc: deployedDesc(len(ok))}
	case now.Sub(d.Started) >= d.Stage.Timeout:
		return verdict{final: true, desc: timedOutDesc(d.Stage.Timeout, len(ok), required, missing(ok, d.expected))}
	}
	return verdict{desc: waitingDesc(len(ok), required)}
}

// observe reads the reports of the clusters on the merged commit and its descendants: the
// compliant clusters, and the first failing one (a cluster's newest report counts).
func (p *Promoter) observe(ctx context.Context, d *deployment) (ok []string, failed string, err error) {
	commits, err := p.descendants(ctx, d)
	if err != nil {
		return nil, "", err
	}
	gh, err := p.clients.Client(ctx, d.Installation)
	if err != nil {
		return nil, "", err
	}
	state := map[string]string{}
	for _, sha := range commits { // newest first
		statuses, err := gh.Statuses(ctx, d.GitOps, sha)
		if err != nil {
			return nil, "", fmt.Errorf("statuses of %s@%s: %w", d.GitOps, short(sha), err)
		}
		for _, st := range statuses {
			if _, seen := state[st.GetContext()]; !seen && d.Stage.MatchesContext(st.GetContext()) {
				state[st.GetContext()] = st.GetState()
			}
		}
	}
	for _, c := range slices.Sorted(maps.Keys(state)) {
		switch state[c] {
		case "success":
			ok = append(ok, c)
		case "failure", "error":
			if failed == "" {
				failed = c
			}
		}
	}
	return ok, failed, nil
}

// descendants lists the merged commit and the later commits of the GitOps branch, newest first.
func (p *Promoter) descendants(ctx context.Context, d *deployment) ([]string, error) {
	remote, err := p.remote(ctx, d.Installation, d.GitOps)
	if err != nil {
		return nil, err
	}
	var out []string
	err = p.cache.Use(ctx, remote, []string{d.Branch}, func(s *gitcache.Session) error {
		out = firstParents(s, s.Head(d.Branch), plumbing.NewHash(d.Merge))
		return nil
	})
	return out, err
}

// firstParents walks back from head along first parents to merge, newest first, at most
// maxDescendants commits; when merge is not among them the list ends with merge.
func firstParents(s *gitcache.Session, head, merge plumbing.Hash) []string {
	var out []string
	for h := head; !h.IsZero() && len(out) < maxDescendants; {
		out = append(out, h.String())
		if h == merge {
			return out
		}
		c, err := s.Repo.CommitObject(h)
		if err != nil || len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	if len(out) == maxDescendants {
		return append(out[:maxDescendants-1], merge.String())
	}
	return []string{merge.String()} // the merge commit is no longer on the branch: read it alone
}

// expectedClusters are the clusters that reported success on the previous deployment of the
// environment (read from that deployment's GitOps commit): the newest Deployment of the
// environment, other than d's, whose latest status is success, looked for page after page
// among the newest promotion.maxDeployments.
func (p *Promoter) expectedClusters(ctx context.Context, d *deployment) []string {
	gh, err := p.clients.Client(ctx, d.Installation)
	if err != nil {
		return nil
	}
	var previous string // the GitOps commit of the previous successful deployment
	err = ghport.EachDeployment(ctx, gh, d.ControlPlane, github.DeploymentsListOptions{Environment: d.Env},
		func(dep *github.Deployment) (bool, error) {
			var pl payload
			if dep.GetID() == d.ID || json.Unmarshal(dep.Payload, &pl) != nil || pl.GitOpsCommit == "" || pl.GitOpsRepo != d.GitOps.String() {
				return true, nil
			}
			latest, err := gh.LatestDeploymentStatus(ctx, d.ControlPlane, dep.GetID())
			if err != nil || latest.GetState() != "success" {
				return true, nil
			}
			previous = pl.GitOpsCommit
			return false, nil
		})
	if err != nil {
		logger(ctx).Warn().Err(err).Str("environment", d.Env).Msg("looking for the previous successful deployment: no cluster is expected")
	}
	if previous == "" {
		return nil
	}
	return p.compliantAt(ctx, d, previous)
}

// compliantAt reads the clusters of the stage that report success on one GitOps commit.
func (p *Promoter) compliantAt(ctx context.Context, d *deployment, commit string) []string {
	gh, err := p.clients.Client(ctx, d.Installation)
	if err != nil {
		return nil
	}
	statuses, err := gh.Statuses(ctx, d.GitOps, commit)
	if err != nil {
		return nil
	}
	var ok []string
	for _, st := range statuses {
		if d.Stage.MatchesContext(st.GetContext()) && st.GetState() == "success" {
			ok = append(ok, st.GetContext())
		}
	}
	slices.Sort(ok)
	return ok
}

func containsAll(have, want []string) bool {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}

func missing(have, want []string) string {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	var out []string
	for _, w := range want {
		if !set[w] {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (missing " + strings.Join(out, ", ") + ")"
}
