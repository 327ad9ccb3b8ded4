package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/app"
	"github.com/kalypso-gitops/kalypso/config"
	"github.com/kalypso-gitops/kalypso/handlers"
	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/fleetview"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/govapi"
	"github.com/kalypso-gitops/kalypso/internal/hub"
	"github.com/kalypso-gitops/kalypso/internal/hubview"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
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
	clients := &serverClients{maxStatuses: cfg.Promotion.MaxClusters, lists: cfg.ListLimits()}
	cache := gitcache.New(cfg.Cache.Dir, cfg.GitHub.WebURL, gitcache.WithMaxBytes(int64(cfg.Cache.MaxBytes)))
	rec := reconcile.New(cache, clients, reconcile.WithRenderLimits(cfg.Render.Limits()), reconcile.WithPolicy(cfg.SourcePolicy()), reconcile.WithBotLogin(clients.BotLogin))
	index := envref.NewIndex(rec, func(r envref.Repo) bool { return cfg.IsControlPlane(r.Owner, r.Name) })
	rec.UseClaims(index)
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	leases, holder := appLeases(st), replicaName(cfg)
	core := &handlers.Core{Reconciler: rec, Index: index, PreviewComments: cfg.Preview.Comment,
		PreviewBudget: handlers.NewBudget(cfg.Preview.PerAuthorPerHour, nil),
		Installations: installationsOf(clients), Leases: leases, Holder: holder, ResyncTTL: resyncTTL(cfg)}
	popts := []promote.Option{promote.WithPollInterval(cfg.Promotion.PollInterval.Std()),
		promote.WithScheduler(core), promote.WithLeases(leases, holder), promote.WithReports(st), promote.WithAudit(st), promote.WithHolds(st)}
	now := time.Now
	if clock := testClock(cfg, os.Getenv); clock != nil {
		logger.Warn().Str("variable", testClockVariable).Msg("the promoter and the fleet view read a test clock")
		popts = append(popts, promote.WithClock(clock), promote.WithWindowRecheck(cfg.Promotion.PollInterval.Std()))
		now = clock
	}
	promoter := promote.New(cache, clients, popts...)
	core.Promoter = promoter
	core.Audit = st
	users := audit.GitHubUsers{APIURL: cfg.GitHub.V3APIURL}
	trail := &audit.API{Trail: st, Users: users, Logger: logger.With().Str("component", "audit").Logger()}
	gov := &govapi.API{Users: users, Resolve: resolveEnvironment(index, installationsOf(clients)), Promoter: promoter,
		Logger: logger.With().Str("component", "governance").Logger()}
	opts = append(opts, app.WithPublicRoutes(trail.Register), app.WithPublicRoutes(gov.Register))
	if cfg.Preview.Enabled {
		core.Previews = rec
	}
	fleet, err := fleetService(cfg, logger, fleetview.Sources{Installations: installationsOf(clients), Index: index,
		Results: rec, Repos: cache, Clients: restClients{clients}, WebURL: cfg.GitHub.WebURL, Holds: st.Holds, Now: now})
	if err != nil {
		return nil, err
	}
	if fleet != nil {
		opts = append(opts, app.WithPublicRoutes(fleet.Register))
	}
	wake := func(cp, env string) { promoter.WakeEnvironment(logger.WithContext(ctx), cp, env) }
	var reports *hub.Hub
	if cfg.Reports.Enabled() {
		reports = newHub(hubParts{cfg: cfg, store: st, list: installationsOf(clients), index: index, results: rec, cache: cache,
			clients: clients, wake: wake, render: renderIn(ctx, core, logger), logger: logger})
		opts = append(opts, app.WithPublicRoutes(reports.Register))
		if fleet != nil && cfg.Fleet.Enabled {
			views := hubview.New(reports, fleet.Reader, fleetview.ErrNoSession, logger.With().Str("component", "hub").Logger())
			opts = append(opts, app.WithPublicRoutes(views.Register))
		}
	}
	hubCtx, stopHub := context.WithCancel(ctx)
	var hubDone <-chan struct{}
	opts = append([]app.Option{app.WithLogger(logger), app.WithWork(core, core.Work), app.WithResync(core.Resync),
		app.WithStop(func() { stopHub(); <-hubDone; closeStore(st, holder, logger) })}, opts...)
	srv, err := app.New(cfg, opts...)
	if err != nil {
		stopHub()
		_ = st.Close()
		return nil, err
	}
	clients.srv = srv
	core.Queue = srv.Queue()
	core.Self = handlers.Identity{AppID: cfg.GitHub.App.IntegrationID, Bot: srv.BotLogin}
	if fleet != nil {
		startFleet(ctx, cfg, fleet, srv)
	}
	hubDone = startHub(hubCtx, hubRun{store: st, hub: reports, registry: srv.Registry(), wake: wake,
		wakeAll: func() { promoter.WakeAll(logger.WithContext(ctx)) }, logger: logger})
	return srv, nil
}

// serverClients gives orchestration the server's installation clients and tokens.
type serverClients struct {
	srv         *app.Server
	maxStatuses int           // promotion.maxClusters
	lists       ghport.Limits // github.maxCheckRuns, github.maxComments, promotion.maxDeployments
}

var _ ghport.Installations = (*serverClients)(nil)

// Client implements ghport.Installations with the REST adapter over the installation's client.
func (c *serverClients) Client(_ context.Context, installation int64) (ghport.GitHub, error) {
	gh, err := c.srv.ClientCreator().NewInstallationClient(installation)
	if err != nil {
		return nil, err
	}
	return ghport.NewREST(gh, ghport.WithMaxStatuses(c.maxStatuses), ghport.WithLimits(c.lists)), nil
}

// BotLogin returns the login of the App's bot user, "<slug>[bot]", from GET /app (signed with
// the App's JWT): the author of the app's own comments.
func (c *serverClients) BotLogin(ctx context.Context) (string, error) {
	gh, err := c.srv.ClientCreator().NewAppClient()
	if err != nil {
		return "", err
	}
	app, _, err := gh.Apps.Get(ctx, "")
	if err != nil {
		return "", fmt.Errorf("GET /app: %w", err)
	}
	if app.GetSlug() == "" {
		return "", errors.New("GET /app: the App has no slug")
	}
	return app.GetSlug() + "[bot]", nil
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

// replicaName names this replica as a lease holder: store.replicaName (in Kubernetes the
// pod's name, so that a restarted container takes its leases back at once), else its host
// name and process.
func replicaName(cfg *config.Config) string {
	if cfg.Store.ReplicaName != "" {
		return cfg.Store.ReplicaName
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// resyncTTL is how long a replica keeps an installation's resync to itself: most of the
// interval, so that it renews the lease at its next resync and no other replica repeats it.
func resyncTTL(cfg *config.Config) time.Duration {
	if d := cfg.Resync.Interval.Std(); d > 0 {
		return d * 9 / 10
	}
	return time.Minute
}
