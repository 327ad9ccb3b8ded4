package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/config"
	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

const demoSecret = "demo-webhook-secret"

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var verbose bool
	fs := newFlagSet("demo", "[--verbose]",
		"Runs the app against its built-in GitHub simulator seeded with the sample control plane (the public\n"+
			"Kalypso sample: environments dev and stage, one workload, a GitOps repository), makes the changes a\n"+
			"user would make — an environment branch push, a workload change, a broken file — and prints what the\n"+
			"app did: pull requests with their change summaries and check runs with their conclusions.\n"+
			"Needs git (for git-http-backend), no network and no account; finishes by itself.", stderr)
	fs.BoolVar(&verbose, "verbose", false, "also print the app's logs")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := demo(ctx, stdout, verbose); err != nil {
		fmt.Fprintf(stderr, "kalypso demo: %v\n", err)
		return 1
	}
	return 0
}

// demoWorld is the simulator and the app of a demo run.
type demoWorld struct {
	sim    *githubsim.Server
	seeded *sample.Seeded
	out    io.Writer
	app    string // the app's public address
}

func demo(ctx context.Context, out io.Writer, verbose bool) error {
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
	fmt.Fprintf(out, "Simulated GitHub at %s with %s/%s (main, dev, stage), %s/%s and %s/%s.\n\n",
		sim.URL(), sample.Owner, sample.ControlPlane, sample.Owner, sample.WorkloadRepo, sample.Owner, sample.GitOpsRepo)
	stopApp, addr, err := startDemoApp(ctx, sim, dir, verbose, out)
	if err != nil {
		return err
	}
	defer stopApp()
	w := &demoWorld{sim: sim, seeded: seeded, out: out, app: addr}
	if err := w.story(ctx); err != nil {
		return err
	}
	return w.hubStory(ctx)
}

// startDemoApp runs the app in this process against the simulator and waits for its first resync.
func startDemoApp(ctx context.Context, sim *githubsim.Server, dir string, verbose bool, out io.Writer) (func(), string, error) {
	keyFile := filepath.Join(dir, "app-key.pem")
	if err := os.WriteFile(keyFile, sim.PrivateKeyPEM(), 0o600); err != nil {
		return nil, "", err
	}
	settings := map[string]string{
		"KALYPSO_SERVER_ADDRESS":              "127.0.0.1:0",
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
	}
	maps.Copy(settings, demoHubSettings(sim, dir))
	cfg, err := config.Load("", func(k string) string { return settings[k] })
	if err != nil {
		return nil, "", err
	}
	logs := io.Discard
	if verbose {
		logs = out
	}
	runCtx, cancel := context.WithCancel(ctx)
	srv, err := NewServer(runCtx, cfg, logs)
	if err != nil {
		cancel()
		return nil, "", err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	select {
	case <-srv.Ready():
	case err := <-done:
		cancel()
		return nil, "", fmt.Errorf("the app stopped: %w", err)
	}
	sim.SetWebhook("http://"+srv.Addr()+"/api/github/hook", demoSecret)
	fmt.Fprintf(out, "The app listens on %s; its start-up resync reconciles every environment.\n", srv.Addr())
	return func() { cancel(); <-done }, srv.Addr(), nil
}

// story makes a user's changes one after the other and shows what the app did after each.
func (w *demoWorld) story(ctx context.Context) error {
	if err := w.waitPRs(ctx, 2); err != nil {
		return err
	}
	w.showPRs("After the first resync")
	steps := []struct {
		title, repo, branch, path, content, why string
	}{
		{"1. A platform engineer changes dev's common config (ENVIRONMENT: Dev → Development)", sample.ControlPlane, "dev",
			"configs/dev-config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dev-config\n  labels:\n     platform-config: \"true\"\ndata:\n  ENVIRONMENT: Development\n  SOME_COMMON_ENVIRONMENT_VARIABLE: \"false\"", ""},
		{"2. The application team moves prometheus to a new manifests folder", sample.WorkloadRepo, "main",
			"workloads/observability.yaml", "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata:\n  name: observability\n  labels:\n    type: service\n    stack: observability\nspec:\n  deploymentTargets:\n    - name: prometheus\n      environment: dev\n      manifests:\n        repo: https://github.com/microsoft/kalypso-svc-gitops\n        branch: dev\n        path: ./prometheus-v2\n", ""},
		{"3. Someone pushes a broken cluster type to dev (a misspelt field)", sample.ControlPlane, "dev",
			"cluster-types/west-us/large/large-cluster-type.yaml", "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: large\n  labels:\n    region: west-us\n    size: large\nspec:\n  reconciler: arc-flux\n  namespaceServise: default\n  configType: configmap\n",
			"  Why: a broken ClusterType holds back what depends on it. The large cluster type's assignment keeps its\n" +
				"  last merged output, so the changes of steps 1 and 2 to it leave the pull request until the file is\n" +
				"  fixed; the errors are on the commit's check run and listed in the pull request."},
	}
	for _, s := range steps {
		fmt.Fprintf(w.out, "\n%s\n", s.title)
		before := w.prTree("dev")
		content := s.content
		sha, err := w.sim.CommitFiles(sample.Owner, s.repo, s.branch, map[string]*string{s.path: &content}, s.title)
		if err != nil {
			return err
		}
		runs, err := w.waitChecks(ctx, s.repo, sha)
		if err != nil {
			return err
		}
		w.showChecks(s.repo, sha, runs)
		w.showStepChanges("dev", before, w.prTree("dev"))
		if s.why != "" {
			fmt.Fprintln(w.out, s.why)
		}
		w.showPRs("Pull requests now")
	}
	return nil
}

func (w *demoWorld) waitPRs(ctx context.Context, n int) error {
	return poll(ctx, func() bool { return len(w.appPRs()) >= n }, "the app's pull requests")
}

func (w *demoWorld) waitChecks(ctx context.Context, repo, sha string) ([]*github.CheckRun, error) {
	var runs []*github.CheckRun
	err := poll(ctx, func() bool {
		runs = w.sim.CheckRuns(sample.Owner, repo, sha)
		return len(runs) > 0 && runs[0].GetStatus() == "completed"
	}, "a check run on "+sha[:7])
	return runs, err
}

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

func (w *demoWorld) appPRs() []*github.PullRequest { return sample.AppPullRequests(w.sim) }

func (w *demoWorld) showPRs(title string) {
	fmt.Fprintf(w.out, "\n%s — open pull requests on %s/%s:\n", title, sample.Owner, sample.GitOpsRepo)
	for _, pr := range w.appPRs() {
		head, _ := w.sim.BranchSHA(sample.Owner, sample.GitOpsRepo, pr.GetHead().GetRef())
		fmt.Fprintf(w.out, "  #%d %s (%s → %s, head %s)\n", pr.GetNumber(), pr.GetTitle(), pr.GetHead().GetRef(), pr.GetBase().GetRef(), short(head))
		for _, line := range strings.Split(pr.GetBody(), "\n") {
			if strings.HasPrefix(line, "|") || strings.Contains(line, " added, ") || strings.HasPrefix(line, "- `") {
				fmt.Fprintf(w.out, "      %s\n", line)
			}
		}
	}
}

func (w *demoWorld) showChecks(repo, sha string, runs []*github.CheckRun) {
	for _, run := range runs {
		fmt.Fprintf(w.out, "  check run %q on %s/%s@%s: %s — %s\n", run.GetName(), sample.Owner, repo, short(sha),
			run.GetConclusion(), run.GetOutput().GetTitle())
		anns, _, err := w.sim.CheckRunDetails(run.GetID())
		if err != nil {
			continue
		}
		for _, a := range anns {
			fmt.Fprintf(w.out, "      %s:%d: %s\n", a.GetPath(), a.GetStartLine(), a.GetMessage())
		}
	}
}

func short(sha string) string { return sha[:min(7, len(sha))] }
