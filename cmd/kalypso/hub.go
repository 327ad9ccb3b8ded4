package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/app"
	"github.com/kalypso-gitops/kalypso/config"
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
	logger  zerolog.Logger
}

// newHub builds the hub of the reports endpoint.
func newHub(p hubParts) *hub.Hub {
	r := p.cfg.Reports
	dir := hub.NewDirectory(hubTargets(p.list, p.index, p.results), hubDirectoryRefresh, hubDirectoryMinRetry, time.Now)
	dir.UseClusterTypes(func(t hub.Target) []string { return clusterTypes(envOf(t), p.results) })
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

// startHub runs the hub (when reports are enabled) until ctx ends, then closes the store.
func startHub(ctx context.Context, st *store.Store, h *hub.Hub, srv *app.Server) {
	go func() {
		if h != nil {
			h.UseRegistry(srv.Registry())
			h.Run(ctx)
		} else {
			<-ctx.Done()
		}
		_ = st.Close()
	}()
}
