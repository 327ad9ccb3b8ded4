package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/rcrowley/go-metrics"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/config"
	"github.com/kalypso-gitops/kalypso/internal/coord"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/fleetview"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitops"
	"github.com/kalypso-gitops/kalypso/internal/hub"
	"github.com/kalypso-gitops/kalypso/internal/store"
)

// Directory refresh periods: how long the list of environments is used before it is read
// again, and how often a report naming an unknown GitOps branch may cause a read.
const (
	hubDirectoryRefresh  = 30 * time.Second
	hubDirectoryMinRetry = 5 * time.Second
)

// openStore opens the hub's database from the store.* settings.
func openStore(ctx context.Context, cfg *config.Config) (*store.Store, error) {
	st, err := store.Open(ctx, store.Options{Driver: cfg.Store.Driver, Path: cfg.Store.Path, URL: cfg.Store.URL.Value()})
	if err != nil {
		return nil, fmt.Errorf("%w (store.driver %s)", err, cfg.Store.Driver)
	}
	return st, nil
}

// hubParts is what the hub reads of the rest of the app.
type hubParts struct {
	cfg     *config.Config
	store   *store.Store
	list    func(ctx context.Context) ([]int64, error)
	index   *envref.Index
	results fleetview.Results
	cache   *gitcache.Cache
	clients *serverClients
	wake    func(controlPlane, env string)
	render  func(env envref.Env) // renders an environment in this replica
	logger  zerolog.Logger
}

// newHub builds the hub of the reports endpoint.
func newHub(p hubParts) *hub.Hub {
	r := p.cfg.Reports
	dir := hub.NewDirectory(hubTargets(p.list, p.index, p.results), hubDirectoryRefresh, hubDirectoryMinRetry, time.Now)
	onDemand := newRenderOnDemand(p.render, hubDirectoryMinRetry, time.Now)
	dir.UseClusterTypes(func(t hub.Target) []string {
		types := clusterTypes(envOf(t), p.results)
		if types == nil {
			onDemand.request(envOf(t)) // the report is refused (503, retry) until it is rendered
		}
		return types
	})
	return hub.New(hub.Options{
		Store: p.store, Directory: dir, Keys: reportKeys(r), OnReport: p.wake, Describe: hubDescriber(p.cache, p.clients),
		Desired: desiredStates(p.results), Head: gitopsHeads(p.cache, p.clients), Writers: hub.WritersFor(p.cfg.Store.Driver),
		Limits: hub.Limits{MaxAge: r.MaxAge.Std(), ClockSkew: r.ClockSkew.Std(), MaxBodyBytes: int64(r.MaxBodyBytes),
			MaxConcurrent: r.MaxConcurrent, MaxClusters: r.MaxClustersPerEnvironment, RetireAfter: r.RetireAfter.Std(),
			Retention: p.cfg.Store.Retention.Std()},
		Logger: p.logger.With().Str("component", "hub").Logger(),
	})
}

// reportKeys gives the report credentials of a control plane ("" for the defaults).
func reportKeys(r config.Reports) hub.Keys {
	return func(controlPlane string) hub.Credentials {
		c := r.ReportCredentialsFor(controlPlane)
		return hub.Credentials{Secret: []byte(c.Secret.Value()), BearerToken: []byte(c.BearerToken.Value())}
	}
}

// hubTargets lists the environments of every installation, with the cluster types of the
// environments this replica has rendered.
func hubTargets(list func(ctx context.Context) ([]int64, error), index *envref.Index, results fleetview.Results) hub.Targets {
	return func(ctx context.Context) ([]hub.Target, error) {
		ids, err := list(ctx)
		if err != nil {
			return nil, err
		}
		var out []hub.Target
		for _, id := range ids {
			infos, err := index.Environments(ctx, id)
			if err != nil {
				return nil, err
			}
			for _, info := range infos {
				out = append(out, target(info, results))
			}
		}
		return out, nil
	}
}

// target describes one environment for attribution.
func target(info envref.EnvInfo, results fleetview.Results) hub.Target {
	t := hub.Target{Installation: info.Env.Installation, ControlPlane: info.Env.ControlPlane.String(), Environment: info.Env.Name,
		GitOpsRepo: info.GitOps.String(), GitOpsBranch: info.GitOpsBranch, GitOpsPath: info.GitOpsPath}
	t.ClusterTypes = clusterTypes(info.Env, results)
	return t
}

// clusterTypes lists the cluster types of the environment's last rendered result, sorted;
// nil when this replica has not rendered it yet.
func clusterTypes(env envref.Env, results fleetview.Results) []string {
	res, _, ok := results.LastResult(env)
	if !ok || res.Snapshot == nil {
		return nil
	}
	out := []string{}
	for _, ct := range res.Snapshot.ClusterTypes {
		out = append(out, ct.Name)
	}
	slices.Sort(out)
	return out
}

// hubDescriber reads a GitOps commit's provenance from the git cache.
func hubDescriber(cache *gitcache.Cache, clients *serverClients) hub.Describer {
	return func(ctx context.Context, t hub.Target, sha string) (store.CommitInfo, error) {
		owner, name, _ := strings.Cut(t.GitOpsRepo, "/")
		token, err := clients.Token(ctx, t.Installation)
		if err != nil {
			return store.CommitInfo{}, err
		}
		var info store.CommitInfo
		err = cache.Use(ctx, gitcache.Remote{Owner: owner, Name: name, Token: token}, []string{t.GitOpsBranch}, func(s *gitcache.Session) error {
			prov, err := gitops.ReadProvenance(s.Repo, plumbing.NewHash(sha), t.GitOpsPath)
			if err != nil {
				return err
			}
			info.MainCommit, info.CommittedAt = prov.Main, prov.Committed
			for _, src := range prov.Sources {
				info.Sources = append(info.Sources, store.Source{Name: src[0], Commit: src[1]})
			}
			return nil
		})
		return info, err
	}
}

// hubRun is what runs beside the app for the hub: the writers of reports (when reports are
// enabled) and the listener of the changes other replicas commit to the store.
type hubRun struct {
	store    *store.Store
	hub      *hub.Hub // nil: reports are not enabled
	registry metrics.Registry
	wake     func(controlPlane, env string) // wakes an environment's promotion wait in this replica
	wakeAll  func()                         // wakes every promotion wait of this replica
	logger   zerolog.Logger
}

// startHub runs the hub and listens for the changes other replicas commit to the store
// (PostgreSQL: a report stored by one replica wakes the wait another one holds) until ctx
// ends; the channel returned is closed once both have stopped.
func startHub(ctx context.Context, r hubRun) <-chan struct{} {
	var wg sync.WaitGroup
	if r.hub != nil {
		r.hub.UseRegistry(r.registry)
		wg.Go(func() { r.hub.Run(ctx) })
	}
	wg.Go(func() {
		_ = r.store.Listen(ctx, store.Changes{
			Changed: func(cp, env string) {
				if r.hub != nil {
					r.hub.Changed(cp, env)
				}
				r.wake(cp, env)
			},
			Listening: r.wakeAll, // notices sent while the connection was lost are not delivered
			Failed: func(err error) {
				r.logger.Warn().Err(err).Msg("listening for other replicas' reports; waits poll meanwhile")
			},
		})
	})
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

// closeStore gives up the leases this replica holds, so that another replica takes its
// periodic work at once rather than when they expire, and closes the store.
func closeStore(st *store.Store, holder string, logger zerolog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), storeCloseTimeout)
	defer cancel()
	if err := st.ReleaseAll(ctx, holder); err != nil {
		logger.Warn().Err(err).Msg("releasing this replica's leases")
	}
	if err := st.Close(); err != nil {
		logger.Warn().Err(err).Msg("closing the store")
	}
}

// storeCloseTimeout bounds the release of the leases at shutdown.
const storeCloseTimeout = 5 * time.Second

// appLeases are the leases of periodic work: the store's with PostgreSQL, which replicas
// share, so that each resync and promotion wait runs in one replica at a time; in-process
// ones with SQLite, which serves a single replica (see docs/install.md, Replicas).
func appLeases(st *store.Store) coord.Leases {
	if st.Driver() == store.Postgres {
		return st
	}
	return coord.NewLocal()
}
