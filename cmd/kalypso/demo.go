package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/kalypso-gitops/kalypso/config"
	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

const demoSecret = "demo-webhook-secret"

// demoUser is the user the demo acts as: write permission on the control plane (it merges,
// clicks Promote and Accept) and the fleet page's demo sign-in.
const demoUser = "platform-lead"

// demoTimeout bounds the acts; with --serve the app then stays up until interrupted.
const demoTimeout = 3 * time.Minute

// demoAct is one act of the demo, each in a file of its own (demo_*.go).
type demoAct struct {
	title string
	run   func(w *demoWorld, ctx context.Context) error
}

// demoActs are the acts in the order they play.
func demoActs() []demoAct {
	return []demoAct{
		{"Pull requests and check runs", (*demoWorld).changesAct},
		{"Promotion from dev to stage", (*demoWorld).promotionAct},
		{"A preview and the blast-radius guard", (*demoWorld).previewAct},
		{"The fleet page", (*demoWorld).fleetAct},
		{"The Deployment Observability Hub", (*demoWorld).hubAct},
	}
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var opts demoOptions
	fs := newFlagSet("demo", "[--verbose] [--serve [--listen ADDR]]",
		"Runs the app against its built-in GitHub simulator seeded with the sample control plane (the public\n"+
			"Kalypso sample: environments dev and stage, one workload, a GitOps repository) and plays what users do,\n"+
			"printing what the app did after each step:\n"+
			"  1. pull requests and check runs: an environment branch push, a workload change, a broken file;\n"+
			"  2. promotion: a promotion chain declared on main, dev's pull request merged, a cluster reporting,\n"+
			"     the Promote button clicked for stage;\n"+
			"  3. a pull request's preview failing dev's blast-radius guard, and its Accept button;\n"+
			"  4. the fleet page, read through its sign-in with GitHub;\n"+
			"  5. the hub: 36 clusters report a promotion of dev with Flux's signed events, one failing, and a\n"+
			"     gate at 90 % decides; where to open the hub's pages.\n"+
			"Needs git (for git-http-backend), no network and no account; finishes by itself, unless --serve keeps\n"+
			"the app and the fleet page up (with a demo sign-in) until interrupted.", stderr)
	fs.BoolVar(&opts.verbose, "verbose", false, "also print the app's logs")
	fs.BoolVar(&opts.serve, "serve", false, "after the acts, keep serving the fleet page until interrupted (Ctrl-C)")
	fs.StringVar(&opts.listen, "listen", "127.0.0.1:0", "address of the app (webhooks and the fleet page); port 0 picks a free one")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if err := demo(ctx, stdout, opts); err != nil {
		fmt.Fprintf(stderr, "kalypso demo: %v\n", err)
		return 1
	}
	return 0
}

// demoOptions are the demo's flags.
type demoOptions struct {
	verbose, serve bool
	listen         string
}

// demoWorld is the simulator and the app of a demo run.
type demoWorld struct {
	sim     *githubsim.Server
	seeded  *sample.Seeded
	out     io.Writer
	appAddr string // the app's public listener, host:port
	// mainSHA is the control plane's main commit that declares the promotion chain.
	mainSHA string
}

func demo(ctx context.Context, out io.Writer, opts demoOptions) error {
	dir, err := os.MkdirTemp("", "kalypso-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sim, err := githubsim.New(githubsim.Options{Dir: filepath.Join(dir, "github")})
	if err != nil {
		return err
	}
	if err := sim.Start(); err != nil {
		return err
	}
	defer sim.Close()
	seeded, err := sample.Seed(sim, sample.Owner)
	if err != nil {
		return err
	}
	if err := sim.SetPermission(sample.Owner, sample.ControlPlane, demoUser, "write"); err != nil {
		return err
	}
	fmt.Fprintf(out, "Simulated GitHub at %s with %s/%s (main, dev, stage), %s/%s and %s/%s.\n\n",
		sim.URL(), sample.Owner, sample.ControlPlane, sample.Owner, sample.WorkloadRepo, sample.Owner, sample.GitOpsRepo)
	addr, err := freeAddr(opts.listen)
	if err != nil {
		return err
	}
	stopApp, err := startDemoApp(ctx, sim, dir, addr, opts.verbose, out)
	if err != nil {
		return err
	}
	defer stopApp()
	w := &demoWorld{sim: sim, seeded: seeded, out: out, appAddr: addr}
	actsCtx, cancel := context.WithTimeout(ctx, demoTimeout)
	defer cancel()
	for i, act := range demoActs() {
		fmt.Fprintf(out, "\n=== Act %d: %s ===\n", i+1, act.title)
		if err := act.run(w, actsCtx); err != nil {
			return fmt.Errorf("act %d (%s): %w", i+1, act.title, err)
		}
	}
	if opts.serve {
		return w.serve(ctx)
	}
	fmt.Fprintln(out, "\nRun `kalypso demo --serve` to keep the app up and open the fleet page in a browser.")
	return nil
}

// freeAddr resolves port 0 of addr to a free port, so that the fleet page's public URL (its
// OAuth callback) is known before the app starts.
func freeAddr(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("flag --listen: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startDemoApp runs the app in this process against the simulator and waits for its first resync.
func startDemoApp(ctx context.Context, sim *githubsim.Server, dir, addr string, verbose bool, out io.Writer) (func(), error) {
	keyFile := filepath.Join(dir, "app-key.pem")
	if err := os.WriteFile(keyFile, sim.PrivateKeyPEM(), 0o600); err != nil {
		return nil, err
	}
	settings := map[string]string{
		"KALYPSO_SERVER_ADDRESS":              addr,
		"KALYPSO_SERVER_MANAGEMENT_ADDRESS":   "127.0.0.1:0",
		"KALYPSO_GITHUB_V3_API_URL":           sim.APIURL(),
		"KALYPSO_GITHUB_WEB_URL":              sim.URL(),
		"KALYPSO_GITHUB_APP_INTEGRATION_ID":   fmt.Sprint(sim.AppID()),
		"KALYPSO_GITHUB_APP_WEBHOOK_SECRET":   demoSecret,
		"KALYPSO_GITHUB_APP_PRIVATE_KEY_FILE": keyFile,
		"KALYPSO_RESYNC_INTERVAL":             "0",
		"KALYPSO_LOG_FORMAT":                  "console",
		"KALYPSO_CONTROL_PLANES":              sample.Owner + "/" + sample.ControlPlane,
		"KALYPSO_SOURCES_MANIFEST_HOSTS":      "github.com", // the sample's application manifests
		"KALYPSO_PROMOTION_POLL_INTERVAL":     "200ms",
		// The fleet page, signed in to through the simulator's OAuth web flow.
		"KALYPSO_FLEET_ENABLED":          "true",
		"KALYPSO_FLEET_PUBLIC_URL":       "http://" + addr,
		"KALYPSO_FLEET_CLIENT_ID":        sim.ClientID(),
		"KALYPSO_FLEET_CLIENT_SECRET":    sim.ClientSecret(),
		"KALYPSO_FLEET_SESSION_KEY":      rand.Text() + rand.Text(),
		"KALYPSO_FLEET_REFRESH_INTERVAL": "0",
		"KALYPSO_WORKERS":                "1", // environments reconciled in order: the same pull request numbers on every run
		// The hub: clusters' signed reports, kept in the demo's folder.
		"KALYPSO_REPORTS_SECRET": demoReportsSecret,
		"KALYPSO_STORE_PATH":     filepath.Join(dir, "hub.db"),
	}
	cfg, err := config.Load("", func(k string) string { return settings[k] })
	if err != nil {
		return nil, err
	}
	logs := io.Discard
	if verbose {
		logs = out
	}
	runCtx, cancel := context.WithCancel(ctx)
	srv, err := NewServer(runCtx, cfg, logs)
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	select {
	case <-srv.Ready():
	case err := <-done:
		cancel()
		return nil, fmt.Errorf("the app stopped: %w", err)
	}
	sim.SetWebhook("http://"+srv.Addr()+"/api/github/hook", demoSecret)
	fmt.Fprintf(out, "The app listens on %s; its start-up resync reconciles every environment.\n", srv.Addr())
	return func() { cancel(); <-done }, nil
}

// poll waits until cond holds, checking every 25 ms, or until ctx ends.
func poll(ctx context.Context, cond func() bool, what string) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return errors.New("timed out waiting for " + what)
		case <-time.After(25 * time.Millisecond):
		}
	}
	return nil
}

func short(sha string) string { return sha[:min(7, len(sha))] }
