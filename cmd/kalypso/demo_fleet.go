package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/fleetview"
	"github.com/kalypso-gitops/kalypso/internal/plural"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// signInURL is the demo sign-in: the simulator signs the browser in as the demo user, then
// sends it to the app's /fleet/login, which runs GitHub's OAuth web flow against the simulator.
func (w *demoWorld) signInURL() string {
	return w.sim.URL() + "/login?user=" + demoUser + "&return_to=" + url.QueryEscape(w.fleetURL()+"/login")
}

func (w *demoWorld) fleetURL() string { return "http://" + w.appAddr + "/fleet" }

// fleetAct signs in to the fleet page as the demo user, as a browser would, and prints what
// the page shows of each environment.
func (w *demoWorld) fleetAct(ctx context.Context) error {
	browser, err := w.signIn(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w.out, "\nSigned in to %s as %s through the sign-in with GitHub (the simulator's OAuth web flow).\n", w.fleetURL(), demoUser)
	page, err := get(ctx, browser, w.fleetURL())
	if err != nil {
		return err
	}
	if m := regexp.MustCompile(`<title>([^<]*)</title>`).FindStringSubmatch(page); m != nil {
		fmt.Fprintf(w.out, "  /fleet serves the page %q (HTML, no JavaScript); the same data is JSON at /api/v1/fleet:\n", m[1])
	}
	var fleet *fleetview.Fleet
	var readErr error
	if err := poll(ctx, func() bool {
		fleet, readErr = w.readFleet(ctx, browser)
		return readErr == nil && settled(fleet)
	}, "the fleet page to show the promotions"); err != nil {
		return errors.Join(err, readErr)
	}
	for _, cp := range fleet.ControlPlanes {
		fmt.Fprintf(w.out, "  control plane %s\n", cp.Repo)
		for _, e := range cp.Environments {
			w.showFleetEnvironment(e)
		}
	}
	return nil
}

// readFleet reads /api/v1/fleet as the signed-in browser.
func (w *demoWorld) readFleet(ctx context.Context, browser *http.Client) (*fleetview.Fleet, error) {
	body, err := get(ctx, browser, "http://"+w.appAddr+"/api/v1/fleet")
	if err != nil {
		return nil, err
	}
	var fleet fleetview.Fleet
	if err := json.Unmarshal([]byte(body), &fleet); err != nil {
		return nil, fmt.Errorf("/api/v1/fleet: %w", err)
	}
	return &fleet, nil
}

// settled reports whether every environment shows its promotion, a deployed one with its
// GitHub Deployment's success (the app writes the status and the Deployment one after the
// other).
func settled(f *fleetview.Fleet) bool {
	for _, cp := range f.ControlPlanes {
		for _, e := range cp.Environments {
			deployedShown := len(e.History) > 0 && e.History[0].State == "success"
			if e.Promotion.State == fleetview.StateUnknown || (e.Promotion.State == fleetview.StateDeployed && !deployedShown) {
				return false
			}
		}
	}
	return len(f.ControlPlanes) > 0
}

// showFleetEnvironment prints one environment as the fleet page shows it.
func (w *demoWorld) showFleetEnvironment(e fleetview.Environment) {
	pinned := "nothing"
	if e.Main != nil {
		pinned = "main " + e.Main.Short
	}
	fmt.Fprintf(w.out, "    %-6s pins %s; promotion %s", e.Name, pinned, e.Promotion.State)
	if e.Promotion.Description != "" {
		fmt.Fprintf(w.out, " (%s)", e.Promotion.Description)
	}
	fmt.Fprintln(w.out)
	fmt.Fprintf(w.out, "           %s on %s branch %s", plural.Count(len(e.Assignments), "assignment"), e.GitOps.Repo, e.GitOps.Branch)
	if pr := e.GitOps.PullRequest; pr != nil {
		fmt.Fprintf(w.out, ", pull request #%d open", pr.Number)
	}
	fmt.Fprintln(w.out)
	for _, d := range e.History {
		fmt.Fprintf(w.out, "           deployment of %s: %s\n", d.Commit.Short, d.State)
	}
}

// signIn follows the demo sign-in with a cookie jar and returns the signed-in browser.
func (w *demoWorld) signIn(ctx context.Context) (*http.Client, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	if _, err := get(ctx, browser, w.signInURL()); err != nil {
		return nil, fmt.Errorf("sign in to the fleet page: %w", err)
	}
	return browser, nil
}

// get reads a page and fails on any status but 200.
func get(ctx context.Context, client *http.Client, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return string(body), nil
}

// serve keeps the app up after the acts, with the fleet page and its demo sign-in, until ctx
// ends (Ctrl-C).
func (w *demoWorld) serve(ctx context.Context) error {
	fmt.Fprintf(w.out, "\nThe app keeps running until you press Ctrl-C.\n")
	fmt.Fprintf(w.out, "  Fleet page:   %s\n", w.fleetURL())
	fmt.Fprintf(w.out, "  Hub pages:    %s/hub/environments\n", w.fleetURL())
	fmt.Fprintf(w.out, "  Demo sign-in: %s\n", w.signInURL())
	fmt.Fprintf(w.out, "                (signs you in as %s, who may read and write %s/%s)\n", demoUser, sample.Owner, sample.ControlPlane)
	fmt.Fprintf(w.out, "  Simulated GitHub: %s (REST API at %s)\n", w.sim.URL(), w.sim.APIURL())
	<-ctx.Done()
	fmt.Fprintln(w.out, "\nStopped.")
	return nil
}
