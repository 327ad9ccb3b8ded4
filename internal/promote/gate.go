package promote

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/internal/store"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Reports is what the compliance gate reads from and records in the hub's store
// (implemented by *store.Store).
type Reports interface {
	States(ctx context.Context, q store.StateQuery) ([]store.ClusterState, error)
	StartDeployment(ctx context.Context, d store.Deployment) (int64, error)
	FinishDeployment(ctx context.Context, id int64, state, desc string, at time.Time) error
}

// WithReports makes waits read the clusters' direct reports from the hub's store when the
// environment has registered clusters there, and record the deployment history in it.
func WithReports(r Reports) Option { return func(p *Promoter) { p.reports = r } }

// WakeEnvironment makes the wait of an environment look at once (reports of it were stored).
func (p *Promoter) WakeEnvironment(controlPlane, env string) {
	if r, ok := p.waits.Load(controlPlane + "/" + env); ok {
		select {
		case r.(*running).wake <- struct{}{}:
		default:
		}
	}
}

// look decides a wait from the hub's inventory when the environment has registered clusters,
// else from the commit statuses of the GitOps commits.
func (p *Promoter) look(ctx context.Context, d *deployment) (verdict, error) {
	if p.reports != nil {
		states, err := p.reports.States(ctx, store.StateQuery{ControlPlane: d.ControlPlane.String(), Environment: d.Env})
		if err == nil && len(states) > 0 {
			p.recordStart(ctx, d)
			allowed, err := p.descendants(ctx, d)
			if err != nil {
				return verdict{desc: waitingDesc(0, d.Stage.MinClusters)}, err
			}
			return gateVerdict(d.Stage, p.now().Sub(d.Started), states, allowed), nil
		}
		if err != nil {
			logger(p.base).Warn().Err(err).Str("environment", d.Env).Msg("reading the hub's inventory; reading commit statuses instead")
		}
	}
	ok, failed, err := p.observe(ctx, d)
	return judge(d, p.now(), ok, failed, err == nil), err
}

// recordStart records the deployment in the hub's history once per wait.
func (p *Promoter) recordStart(ctx context.Context, d *deployment) {
	if d.historyID != 0 {
		return
	}
	rec := store.Deployment{ControlPlane: d.ControlPlane.String(), Environment: d.Env, MainCommit: d.Commit, GitOpsCommit: d.Merge, StartedAt: d.Started}
	p.readProvenance(ctx, d, &rec)
	id, err := p.reports.StartDeployment(ctx, rec)
	if err != nil {
		logger(p.base).Warn().Err(err).Str("environment", d.Env).Msg("recording a deployment in the hub")
		return
	}
	d.historyID = id
}

// readProvenance fills the main commit's time (for the lead time) and the merge's sources.
func (p *Promoter) readProvenance(ctx context.Context, d *deployment, rec *store.Deployment) {
	if remote, err := p.remote(ctx, d.Installation, d.GitOps); err == nil {
		_ = p.cache.Use(ctx, remote, []string{d.Branch}, func(s *gitcache.Session) error {
			if prov, err := gitops.ReadProvenance(s.Repo, plumbing.NewHash(d.Merge), ""); err == nil {
				for _, src := range prov.Sources {
					rec.Sources = append(rec.Sources, store.Source{Name: src[0], Commit: src[1]})
				}
			}
			return nil
		})
	}
	_ = p.onMain(ctx, d.Locator, func(_ *scheduling.Chain, s *gitcache.Session) error {
		if c, err := s.Repo.CommitObject(plumbing.NewHash(d.Commit)); err == nil {
			rec.CommittedAt = c.Committer.When.UTC()
		}
		return nil
	})
}

// recordFinish records a wait's verdict in the hub's history.
func (p *Promoter) recordFinish(ctx context.Context, d *deployment, v verdict) {
	if v.details != "" {
		d.detail = v.detail()
	}
	if p.reports == nil || d.historyID == 0 {
		return
	}
	state := "failure"
	if v.success {
		state = "success"
	}
	if err := p.reports.FinishDeployment(ctx, d.historyID, state, v.detail(), p.now()); err != nil {
		logger(p.base).Warn().Err(err).Str("environment", d.Env).Msg("recording a deployment's verdict in the hub")
	}
}

// namesShown is how many clusters a verdict names before it counts the rest.
const namesShown = 10

// tally classifies the registered clusters of a gate.
type tally struct {
	registered         int
	compliant          []string
	failed, stragglers []string
}

// clusterVerdict classifies a cluster: failed when an object failed on an allowed commit,
// compliant when every object succeeded on one, otherwise a straggler.
func clusterVerdict(c store.ClusterState, allowed map[string]bool) string {
	if len(c.Objects) == 0 {
		return store.StatePending
	}
	ok := true
	for _, o := range c.Objects {
		switch {
		case allowed[o.GitOpsCommit] && o.State == store.StateFailure:
			return store.StateFailure
		case !allowed[o.GitOpsCommit] || o.State != store.StateSuccess:
			ok = false
		}
	}
	if ok {
		return store.StateSuccess
	}
	return store.StatePending
}

// count tallies the clusters that keep selects.
func count(states []store.ClusterState, allowed map[string]bool, keep func(store.ClusterState) bool) tally {
	var t tally
	for _, c := range states {
		if !keep(c) {
			continue
		}
		t.registered++
		switch clusterVerdict(c, allowed) {
		case store.StateSuccess:
			t.compliant = append(t.compliant, c.Name)
		case store.StateFailure:
			t.failed = append(t.failed, c.Name)
		default:
			t.stragglers = append(t.stragglers, c.Name)
		}
	}
	return t
}

// gateVerdict decides a wait over the hub's inventory: too many failures (for the
// environment or one of its gated cluster types) end it badly, enough compliant clusters
// end it well, naming the stragglers; the timeout ends it badly; otherwise it goes on.
// The compliant commits are the merged GitOps commit and the later ones of its branch.
func gateVerdict(st *scheduling.Stage, waited time.Duration, states []store.ClusterState, commits []string) verdict {
	allowed := map[string]bool{}
	for _, c := range commits {
		allowed[c] = true
	}
	all := count(states, allowed, func(store.ClusterState) bool { return true })
	required := max(st.Gate.Required(all.registered), st.MinClusters)
	reached := len(all.compliant) >= required
	var failures []string
	if len(all.failed) > st.Gate.MaxFailed {
		failures = append(failures, fmt.Sprintf("%d failed, more than maxFailed %d: %s", len(all.failed), st.Gate.MaxFailed, names(all.failed)))
	}
	for _, ct := range slices.Sorted(maps.Keys(st.Gate.ClusterTypes)) {
		g := st.Gate.ClusterTypes[ct]
		sub := count(states, allowed, func(c store.ClusterState) bool { return c.ClusterType == ct })
		if len(sub.failed) > g.MaxFailed {
			failures = append(failures, fmt.Sprintf("cluster type %s: %d failed, more than maxFailed %d: %s", ct, len(sub.failed), g.MaxFailed, names(sub.failed)))
		}
		reached = reached && len(sub.compliant) >= g.Required(sub.registered)
	}
	gated := fmt.Sprintf("%d of %d registered clusters compliant (minPercent %d)", len(all.compliant), all.registered, st.Gate.MinPercent)
	switch {
	case len(failures) > 0:
		first := all.failed
		if len(first) == 0 {
			first = failedIn(states, allowed)
		}
		return verdict{final: true, desc: failedDesc(first[0]), details: strings.Join(failures, "; ") + "; " + gated}
	case reached:
		d := verdict{final: true, success: true, desc: deployedDesc(len(all.compliant)), details: gated}
		if len(all.stragglers) > 0 {
			d.details += "; not compliant: " + names(all.stragglers)
		}
		if len(all.failed) > 0 {
			d.details += "; failed (within maxFailed): " + names(all.failed)
		}
		return d
	case waited >= st.Timeout:
		return verdict{final: true, desc: timedOutDesc(st.Timeout, len(all.compliant), required, " (missing "+names(all.stragglers)+")"), details: gated}
	}
	return verdict{desc: waitingDesc(len(all.compliant), required), details: gated}
}

// failedIn lists the clusters failed on an allowed commit (for a cluster type's failure).
func failedIn(states []store.ClusterState, allowed map[string]bool) []string {
	var out []string
	for _, c := range states {
		if clusterVerdict(c, allowed) == store.StateFailure {
			out = append(out, c.Name)
		}
	}
	return out
}

// names lists the first ten names, then counts the rest.
func names(list []string) string {
	if len(list) <= namesShown {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:namesShown], ", "), len(list)-namesShown)
}

// detail is the verdict with the details the gate gives (who is missing, who failed).
func (v verdict) detail() string {
	if v.details == "" {
		return v.desc
	}
	return v.desc + "; " + v.details
}
