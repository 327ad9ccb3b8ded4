package hub

import (
	"context"
	"sync"
	"time"

	"github.com/rcrowley/go-metrics"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

// Store is what the hub asks of its database (implemented by *store.Store).
type Store interface {
	Ingest(ctx context.Context, batch []store.Report, o store.IngestOptions) ([]store.Outcome, error)
	RetireSilent(ctx context.Context, cutoff time.Time, why string) ([]store.Cluster, error)
	Prune(ctx context.Context, retention time.Duration) (store.Pruned, error)
	SaveCommit(ctx context.Context, c store.CommitInfo) error
	Commits(ctx context.Context, cp, env string) (map[string]store.CommitInfo, error)
	States(ctx context.Context, q store.StateQuery) ([]store.ClusterState, error)
	CommitCounts(ctx context.Context, cp, env string) ([]store.CommitCount, error)
	ClusterHistory(ctx context.Context, cp, env, cluster string, limit int) ([]store.HistoryEntry, error)
	Deployments(ctx context.Context, cp, env string, since time.Time, limit int) ([]store.Deployment, error)
	Events(ctx context.Context, cp, env string, limit int) ([]store.ClusterEvent, error)
	ClusterCount(ctx context.Context, cp, env string) (int, error)
	Behind(ctx context.Context, cp, env, commit string, limit int) (int, []store.ClusterState, error)
}

// Limits bound what reports may cost and make the app keep (the reports.* settings).
type Limits struct {
	MaxAge        time.Duration // reports.maxAge
	ClockSkew     time.Duration // reports.clockSkew
	MaxBodyBytes  int64         // reports.maxBodyBytes
	MaxConcurrent int           // reports.maxConcurrent
	MaxClusters   int           // reports.maxClustersPerEnvironment
	RetireAfter   time.Duration // reports.retireAfter
	Retention     time.Duration // store.retention
}

// Describer reads what a GitOps commit of an environment deploys (main commit, sources).
type Describer func(ctx context.Context, t Target, sha string) (store.CommitInfo, error)

// Options configures a Hub.
type Options struct {
	Store     Store
	Directory *Directory
	Keys      Keys
	Limits    Limits
	Describe  Describer    // nil: commits are not described
	Desired   DesiredState // the rendered environments (nil: no workloads, no comparison)
	Head      Head         // the GitOps branch heads (nil: no drift)
	// OnReport is called after reports of an environment were stored (wakes its gate).
	OnReport func(controlPlane, environment string)
	Registry metrics.Registry // nil: a private registry
	// Writers is how many transactions of reports run at once (default 1; PostgreSQL takes
	// several, SQLite writes one at a time).
	Writers int
	Now     func() time.Time
	Logger  zerolog.Logger
}

// Hub takes cluster reports and answers questions about the fleet.
type Hub struct {
	opts    Options
	slots   chan struct{}
	batch   *batcher
	known   *commitCache
	heads   *headCache
	answers *answerCache
	metrics *hubMetrics
	wg      sync.WaitGroup
}

// New returns a hub; call Run to start writing reports.
func New(o Options) *Hub {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Registry == nil {
		o.Registry = metrics.NewRegistry()
	}
	h := &Hub{opts: o, slots: make(chan struct{}, max(1, o.Limits.MaxConcurrent)), known: newCommitCache(),
		heads: newHeadCache(o.Head, o.Now), answers: newAnswerCache(o.Now), metrics: newHubMetrics(o.Registry)}
	h.batch = newBatcher(max(1, o.Limits.MaxConcurrent), h.write, h.written)
	return h
}

// UseRegistry exports the hub's metrics in reg. Call it before Run.
func (h *Hub) UseRegistry(reg metrics.Registry) {
	h.opts.Registry = reg
	h.metrics.use(reg)
}

// Run writes reports, describes new GitOps commits and retires silent clusters until ctx
// ends; it returns when every loop has stopped.
func (h *Hub) Run(ctx context.Context) {
	loops := []func(context.Context){h.batch.runWriters(h.opts.Writers), h.known.run(h.describe), h.maintain, h.gauges}
	for _, loop := range loops {
		h.wg.Add(1)
		go func() { defer h.wg.Done(); loop(ctx) }()
	}
	h.wg.Wait()
}

// write stores a batch within the limits.
func (h *Hub) write(ctx context.Context, batch []store.Report) ([]store.Outcome, error) {
	start := time.Now()
	defer func() { h.metrics.batch.UpdateSince(start) }()
	return h.opts.Store.Ingest(ctx, batch, store.IngestOptions{MaxClusters: h.opts.Limits.MaxClusters, ReplayWindow: h.opts.Limits.MaxAge + h.opts.Limits.ClockSkew})
}

// written wakes the gates of the environments that got reports and queues their new commits.
func (h *Hub) written(batch []store.Report, outcomes []store.Outcome) {
	woken := map[[2]string]bool{}
	for i, r := range batch {
		if outcomes[i] != store.Accepted {
			continue
		}
		k := [2]string{r.ControlPlane, r.Environment}
		if !woken[k] {
			woken[k] = true
			h.answers.wrote(r.ControlPlane + "/" + r.Environment)
			if h.opts.OnReport != nil {
				h.opts.OnReport(r.ControlPlane, r.Environment)
			}
		}
		h.known.see(r.ControlPlane, r.Environment, r.GitOpsCommit)
		h.heads.saw(r.ControlPlane+"/"+r.Environment, r.GitOpsCommit)
	}
}

// Changed notes that another replica stored reports of an environment (or retired some of
// its clusters), so that the answers about it are computed again.
func (h *Hub) Changed(controlPlane, environment string) {
	h.answers.wrote(controlPlane + "/" + environment)
}

// describe records what a GitOps commit deploys.
func (h *Hub) describe(ctx context.Context, cp, env, sha string) {
	if h.opts.Describe == nil {
		return
	}
	targets, err := h.opts.Directory.All(ctx)
	if err != nil {
		return
	}
	for _, t := range targets {
		if t.ControlPlane != cp || t.Environment != env {
			continue
		}
		info, err := h.opts.Describe(ctx, t, sha)
		if err != nil {
			h.opts.Logger.Debug().Err(err).Str("environment", t.Key()).Str("commit", sha).Msg("GitOps commit not described")
			h.known.forget(cp, env, sha)
			return
		}
		info.ControlPlane, info.Environment, info.SHA = cp, env, sha
		if err := h.opts.Store.SaveCommit(ctx, info); err != nil {
			h.opts.Logger.Warn().Err(err).Msg("saving a GitOps commit")
			h.known.forget(cp, env, sha)
		}
	}
}

// maintain retires silent clusters and prunes the history, at start and then periodically.
func (h *Hub) maintain(ctx context.Context) {
	t := time.NewTicker(maintenancePeriod)
	defer t.Stop()
	for {
		h.Maintain(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// maintenancePeriod is how often silent clusters are retired and the history pruned.
const maintenancePeriod = 10 * time.Minute

// Maintain retires the clusters silent for longer than reports.retireAfter (each retirement
// is recorded and logged) and prunes the history older than store.retention.
func (h *Hub) Maintain(ctx context.Context) {
	l := h.opts.Limits
	if l.RetireAfter > 0 {
		retired, err := h.opts.Store.RetireSilent(ctx, h.opts.Now().Add(-l.RetireAfter), "silent for longer than "+l.RetireAfter.String()+" (reports.retireAfter)")
		if err != nil {
			h.opts.Logger.Warn().Err(err).Msg("retiring silent clusters")
		}
		for _, c := range retired {
			h.opts.Logger.Info().Str("control_plane", c.ControlPlane).Str("environment", c.Environment).Str("cluster", c.Name).
				Time("last_seen", c.LastSeen).Msg("cluster retired from the inventory")
			if h.opts.OnReport != nil {
				h.opts.OnReport(c.ControlPlane, c.Environment)
			}
		}
	}
	if _, err := h.opts.Store.Prune(ctx, l.Retention); err != nil {
		h.opts.Logger.Warn().Err(err).Msg("pruning the hub's history")
	}
}

// postgresWriters is how many transactions of reports run at once on PostgreSQL.
const postgresWriters = 4

// WritersFor returns the writers a store driver takes: several for PostgreSQL, one else.
func WritersFor(driver string) int {
	if driver == store.Postgres {
		return postgresWriters
	}
	return 1
}
