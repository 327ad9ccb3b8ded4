package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/app"
	"github.com/kalypso-gitops/kalypso/config"
	"github.com/kalypso-gitops/kalypso/handlers"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/fleetview"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/hub"
	"github.com/kalypso-gitops/kalypso/internal/hubview"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

func runServe(ctx context.Context, args []string, _, stderr io.Writer) int {
	var path string
	fs := newFlagSet("serve", "--config FILE",
		"Runs the GitHub App: receives webhooks at /api/github/hook, keeps one pull request per environment\n"+
			"open on each GitOps repository, reports check runs, and resyncs every environment periodically.\n"+
			"Settings come from --config and KALYPSO_* environment variables (see docs/configuration.md).", stderr)
	fs.StringVar(&path, "config", "", "YAML settings file (optional when every setting comes from KALYPSO_* variables)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	cfg, err := config.Load(path, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "kalypso serve: %v\n", err)
		return 2
	}
	srv, err := NewServer(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kalypso serve: %v\n", err)
		return 1
	}
	if err := srv.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "kalypso serve: %v\n", err)
		return 1
	}
	return 0
}

// NewServer wires the app: settings → clients → reconciler → handlers → HTTP server. Background
// promotion waits stop with ctx.
func NewServer(ctx context.Context, cfg *config.Config, logs io.Writer, opts ...app.Option) (*app.Server, error) {
	logger, err := app.NewLogger(cfg.Log, logs)
	if err != nil {
		return nil, err
	}
	clients := &serverClients{}
	cache := gitcache.New(cfg.Cache.Dir, cfg.GitHub.WebURL, gitcache.WithMaxBytes(int64(cfg.Cache.MaxBytes)))
	rec := reconcile.New(cache, clients, reconcile.WithRenderLimits(cfg.Render.Limits()), reconcile.WithPolicy(scheduling.Policy{
		ManifestHosts: cfg.AllowedManifestHosts(), MaxFileBytes: int64(cfg.Sources.MaxFileBytes)}))
	index := envref.NewIndex(rec, func(r envref.Repo) bool { return cfg.IsControlPlane(r.Owner, r.Name) })
	rec.UseClaims(index)
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	promoter := promote.New(logger.WithContext(ctx), cache, clients, index, promote.WithPollInterval(cfg.Promotion.PollInterval.Std()),
		promote.WithReports(st))
	core := &handlers.Core{Reconciler: rec, Index: index, Promoter: promoter, PreviewComments: cfg.Preview.Comment}
	if cfg.Preview.Enabled {
		core.Previews = rec
	}
	fleet, err := fleetService(cfg, logger, fleetview.Sources{Installations: installationsOf(clients), Index: index,
		Results: rec, Repos: cache, Clients: restClients{clients}, WebURL: cfg.GitHub.WebURL})
	if err != nil {
		return nil, err
	}
	if fleet != nil {
		opts = append(opts, app.WithPublicRoutes(fleet.Register))
	}
	var reports *hub.Hub
	if cfg.Reports.Enabled() {
		reports = newHub(hubParts{cfg: cfg, store: st, list: installationsOf(clients), index: index, results: rec, cache: cache,
			clients: clients, wake: promoter.WakeEnvironment, logger: logger})
		opts = append(opts, app.WithPublicRoutes(reports.Register))
		if fleet != nil && cfg.Fleet.Enabled {
			views := hubview.New(reports, fleet.Reader, fleetview.ErrNoSession, logger.With().Str("component", "hub").Logger())
			opts = append(opts, app.WithPublicRoutes(views.Register))
		}
	}
	opts = append([]app.Option{
		app.WithLogger(logger),
		app.WithHandlers(handlers.Push{Core: core}, handlers.CheckRun{Core: core}, handlers.PullRequest{Core: core},
			handlers.Status{Core: core}, handlers.Installation{Core: core}),
		app.WithResync(func(ctx context.Context) error { return resync(ctx, clients, core) }),
	}, opts...)
	srv, err := app.New(cfg, opts...)
	if err != nil {
		return nil, err
	}
	clients.srv = srv
	if fleet != nil {
		startFleet(ctx, cfg, fleet, srv)
	}
	startHub(ctx, st, reports, srv)
	return srv, nil
}

// serverClients gives orchestration the server's installation clients and tokens.
type serverClients struct{ srv *app.Server }

var _ ghport.Installations = (*serverClients)(nil)

// Client implements ghport.Installations with the REST adapter over the installation's client.
func (c *serverClients) Client(_ context.Context, installation int64) (ghport.GitHub, error) {
	gh, err := c.srv.ClientCreator().NewInstallationClient(installation)
	if err != nil {
		return nil, err
	}
	return ghport.NewREST(gh), nil
}

// restClients gives the fleet view go-github clients: it reads more of GitHub than the
// orchestration port offers (refs, deployments with their statuses).
type restClients struct{ *serverClients }

// Client returns the installation's go-github client.
func (c restClients) Client(_ context.Context, installation int64) (*github.Client, error) {
	return c.srv.ClientCreator().NewInstallationClient(installation)
}

// Token implements ghport.Installations.
func (c *serverClients) Token(ctx context.Context, installation int64) (string, error) {
	return c.srv.InstallationToken(ctx, installation)
}

// resync lists the app's installations and reconciles all their environments.
func resync(ctx context.Context, clients *serverClients, core *handlers.Core) error {
	ids, err := installationsOf(clients)(ctx)
	if err != nil {
		return err
	}
	return core.Resync(ctx, ids)
}
