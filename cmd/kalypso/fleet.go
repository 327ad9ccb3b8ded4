package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/app"
	"github.com/kalypso-gitops/kalypso/config"
	"github.com/kalypso-gitops/kalypso/internal/fleetview"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// fleetService builds the fleet view from the app's parts, or nil when neither the page nor
// the badges are enabled.
func fleetService(cfg *config.Config, logger zerolog.Logger, src fleetview.Sources) (*fleetview.Service, error) {
	f := cfg.Fleet
	if !f.Enabled && !f.Badges {
		return nil, nil
	}
	opts := fleetview.Options{Sources: src, Refresh: f.RefreshInterval.Std(), Badges: f.Badges, Logger: logger,
		SessionKey: f.SessionKey.Value(), SessionTTL: f.SessionTTL.Std(), SessionRefresh: f.SessionRefresh.Std()}
	if f.Enabled {
		opts.OAuth = &fleetview.OAuth{ClientID: f.ClientID, ClientSecret: f.ClientSecret.Value(), WebURL: cfg.GitHub.WebURL,
			APIURL: cfg.GitHub.V3APIURL, PublicURL: f.PublicURL, HTTP: &http.Client{Timeout: cfg.GitHub.Timeout.Std()}}
	}
	svc, err := fleetview.New(opts)
	if err != nil {
		return nil, fmt.Errorf("fleet view: %w", err)
	}
	return svc, nil
}

// minBackgroundRefresh is the shortest period of the background refresh that keeps the
// metrics current; pages and badges read again after fleet.refreshInterval anyway.
const minBackgroundRefresh = time.Minute

// startFleet registers the fleet metrics and refreshes the fleet in the background until ctx
// ends, so that the gauges stay current without anyone opening the page.
func startFleet(ctx context.Context, cfg *config.Config, svc *fleetview.Service, srv *app.Server) {
	svc.UseMetrics(fleetview.NewMetrics(srv.Registry(), time.Now))
	go svc.Run(ctx, max(cfg.Fleet.RefreshInterval.Std(), minBackgroundRefresh))
}

// maxInstallations bounds the App's installations read by the resync and the fleet view.
const maxInstallations = 10_000

// installationsOf lists the App's installations, every page, up to maxInstallations.
func installationsOf(clients *serverClients) func(ctx context.Context) ([]int64, error) {
	return func(ctx context.Context) ([]int64, error) {
		gh, err := clients.srv.ClientCreator().NewAppClient()
		if err != nil {
			return nil, err
		}
		ids, err := ghport.ReadPages(maxInstallations, "installations of the App", "a fixed limit", func(page int) ([]int64, int, error) {
			list, resp, err := gh.Apps.ListInstallations(ctx, &github.ListOptions{Page: page, PerPage: ghport.PerPage})
			ids := make([]int64, 0, len(list))
			for _, inst := range list {
				ids = append(ids, inst.GetID())
			}
			return ids, ghport.NextPage(resp), err
		})
		if err != nil {
			return nil, fmt.Errorf("list installations: %w", err)
		}
		return ids, nil
	}
}
