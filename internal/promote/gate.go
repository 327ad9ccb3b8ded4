package promote

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/internal/store"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Reports is what the compliance gate reads from and records in the hub's store
// (implemented by *store.Store).
type Reports interface {
	ClusterCount(ctx context.Context, cp, env string) (int, error)
	GateCounts(ctx context.Context, cp, env string, allowed []string) ([]store.TypeCount, error)
	GateNames(ctx context.Context, cp, env string, allowed []string, verdict, clusterType string, limit int) ([]string, error)
	StartDeployment(ctx context.Context, d store.Deployment) (int64, error)
	FinishDeployment(ctx context.Context, id int64, state, desc string, at time.Time) error
}

// WithReports makes waits read the clusters' direct reports from the hub's store when the
// environment has registered clusters there, and record the deployment history in it.
func WithReports(r Reports) Option { return func(p *Promoter) { p.reports = r } }

// WakeEnvironment makes the promotion into an environment look at once, because reports of
// its clusters were stored: when it waits for clusters in this replica, its promotion is made
// due through the scheduler (the queue coalesces wakes into its next run). A wait held by
// another replica is woken there (see store.Store.Listen); one not waiting here is not.
func (p *Promoter) WakeEnvironment(ctx context.Context, controlPlane, env string) {
	p.wake(ctx, func(e envref.Env) bool { return e.Name == env && e.ControlPlane.String() == controlPlane })
}

// WakeAll makes every promotion that waits for clusters in this replica look at once: reports
// may have been stored unannounced (the listener of other replicas' changes reconnected).
func (p *Promoter) WakeAll(ctx context.Context) {
	p.wake(ctx, func(envref.Env) bool { return true })
}

// wake makes the waiting promotions that keep accepts due through the scheduler.
func (p *Promoter) wake(ctx context.Context, keep func(envref.Env) bool) {
	if p.sched == nil {
		return
	}
	for _, e := range p.waiting(keep) {
		p.sched.Advance(ctx, e)
	}
}

// decide decides a wait from the hub's inventory when the environment has registered
// clusters, else from the commit statuses of the GitOps commits.
func (p *Promoter) decide(ctx context.Context, d *deployment) (verdict, error) {
	if p.reports != nil {
		cp := d.ControlPlane.String()
		n, err := p.reports.ClusterCount(ctx, cp, d.Env)
		if err == nil && n > 0 {
			return p.gate(ctx, d)
		}
		if err != nil {
			logger(ctx).Warn().Err(err).Str("environment", d.Env).Msg("reading the hub's inventory; reading commit statuses instead")
		}
	}
	d.expected = p.expectedOf(ctx, d)
	ok, failed, err := p.observe(ctx, d)
	return judge(d, p.now(), ok, failed, err == nil), err
}

// gate decides a wait from the clusters registered in the hub's store, and records the
// deployment in its history.
func (p *Promoter) gate(ctx context.Context, d *deployment) (verdict, error) {
	cp := d.ControlPlane.String()
	p.recordStart(ctx, d)
	allowed, err := p.descendants(ctx, d)
	if err != nil {
		return verdict{desc: waitingDesc(0, d.Stage.MinClusters)}, err
	}
	counts, err := p.reports.GateCounts(ctx, cp, d.Env, allowed)
	if err != nil {
		return verdict{desc: waitingDesc(0, d.Stage.MinClusters)}, err
	}
	names := func(v, clusterType string) []string {
		list, err := p.reports.GateNames(ctx, cp, d.Env, allowed, v, clusterType, namesShown)
		if err != nil {
			logger(ctx).Warn().Err(err).Str("environment", d.Env).Msg("naming clusters of a verdict")
		}
		return list
	}
	return gateVerdict(d.Stage, p.now().Sub(d.Started), gateFacts{counts: counts, names: names}), nil
}

// recordStart records the deployment in the hub's history once per wait (the record's ID is
// kept per GitHub Deployment; after a restart StartDeployment finds the first record again).
func (p *Promoter) recordStart(ctx context.Context, d *deployment) {
	if d.historyID = p.waits.historyOf(d.ID); d.historyID != 0 {
		return
	}
	rec := store.Deployment{ControlPlane: d.ControlPlane.String(), Environment: d.Env, MainCommit: d.Commit, GitOpsCommit: d.Merge, StartedAt: d.Started}
	p.readProvenance(ctx, d, &rec)
	id, err := p.reports.StartDeployment(ctx, rec)
	if err != nil {
		logger(ctx).Warn().Err(err).Str("environment", d.Env).Msg("recording a deployment in the hub")
		return
	}
	d.historyID = id
	p.waits.keepHistory(d.ID, id)
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
		logger(ctx).Warn().Err(err).Str("environment", d.Env).Msg("recording a deployment's verdict in the hub")
	}
}

// namesShown is how many clusters a verdict names before it counts the rest.
const namesShown = 10

// gateFacts is what a gate decides on: the clusters counted per cluster type by verdict, and
// the first names of a verdict (store.VerdictFailed or VerdictStraggler; "" for every type).
type gateFacts struct {
	counts []store.TypeCount
	names  func(verdict, clusterType string) []string
}

// total sums the counts of every cluster type.
func (f gateFacts) total() store.TypeCount {
	var t store.TypeCount
	for _, c := range f.counts {
		t.Registered += c.Registered
		t.Compliant += c.Compliant
		t.Failed += c.Failed
	}
	return t
}

// of returns the counts of one cluster type.
func (f gateFacts) of(clusterType string) store.TypeCount {
	for _, c := range f.counts {
		if c.ClusterType == clusterType {
			return c
		}
	}
	return store.TypeCount{ClusterType: clusterType}
}

// gateVerdict decides a wait over the hub's inventory: too many failures (for the
// environment or one of its gated cluster types) end it badly, enough compliant clusters
// end it well, naming the stragglers; the timeout ends it badly; otherwise it goes on.
func gateVerdict(st *scheduling.Stage, waited time.Duration, f gateFacts) verdict {
	all := f.total()
	required := max(st.Gate.Required(all.Registered), st.MinClusters)
	reached := all.Compliant >= required
	var failures []string
	if all.Failed > st.Gate.MaxFailed {
		failures = append(failures, fmt.Sprintf("%d failed, more than maxFailed %d: %s", all.Failed, st.Gate.MaxFailed,
			listed(f.names(store.VerdictFailed, ""), all.Failed)))
	}
	for _, ct := range slices.Sorted(maps.Keys(st.Gate.ClusterTypes)) {
		g, c := st.Gate.ClusterTypes[ct], f.of(ct)
		if c.Failed > g.MaxFailed {
			failures = append(failures, fmt.Sprintf("cluster type %s: %d failed, more than maxFailed %d: %s", ct, c.Failed, g.MaxFailed,
				listed(f.names(store.VerdictFailed, ct), c.Failed)))
		}
		reached = reached && c.Compliant >= g.Required(c.Registered)
	}
	stragglers := all.Registered - all.Compliant - all.Failed
	gated := fmt.Sprintf("%d of %d registered clusters compliant (minPercent %d)", all.Compliant, all.Registered, st.Gate.MinPercent)
	switch {
	case len(failures) > 0:
		first := f.names(store.VerdictFailed, "")
		return verdict{final: true, desc: failedDesc(firstOr(first, "?")), details: strings.Join(failures, "; ") + "; " + gated}
	case reached:
		v := verdict{final: true, success: true, desc: deployedDesc(all.Compliant), details: gated}
		if stragglers > 0 {
			v.details += "; not compliant: " + listed(f.names(store.VerdictStraggler, ""), stragglers)
		}
		if all.Failed > 0 {
			v.details += "; failed (within maxFailed): " + listed(f.names(store.VerdictFailed, ""), all.Failed)
		}
		return v
	case waited >= st.Timeout:
		return verdict{final: true, desc: timedOutDesc(st.Timeout, all.Compliant, required, " (missing "+listed(f.names(store.VerdictStraggler, ""), stragglers)+")"),
			details: gated}
	}
	return verdict{desc: waitingDesc(all.Compliant, required), details: gated}
}

func firstOr(list []string, def string) string {
	if len(list) == 0 {
		return def
	}
	return list[0]
}

// listed lists the first names of a verdict and counts the others of its total.
func listed(first []string, total int) string {
	if total > len(first) {
		return fmt.Sprintf("%s and %d more", strings.Join(first, ", "), total-len(first))
	}
	return strings.Join(first, ", ")
}

// detail is the verdict with the details the gate gives (who is missing, who failed).
func (v verdict) detail() string {
	if v.details == "" {
		return v.desc
	}
	return v.desc + "; " + v.details
}
