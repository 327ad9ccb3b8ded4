package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/hub"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// The demo's hub: the key its clusters sign reports with, how many report, and who looks.
const (
	demoReportsSecret = "demo-flux-generic-hmac-key"
	demoClusters      = 36
	demoFailing       = "edge-07"
	demoViewer        = "demo-viewer"
)

// demoHubSettings turns the hub and the fleet view on for the demo: reports signed with
// demoReportsSecret, the store in the demo's folder, sign-in through the simulator. The
// public listener gets a fixed free port, which the OAuth callback URL needs.
func demoHubSettings(sim *githubsim.Server, dir string) map[string]string {
	addr := "127.0.0.1:0"
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		addr = ln.Addr().String()
		ln.Close()
	}
	return map[string]string{
		"KALYPSO_SERVER_ADDRESS":         addr,
		"KALYPSO_REPORTS_SECRET":         demoReportsSecret,
		"KALYPSO_STORE_PATH":             filepath.Join(dir, "hub.db"),
		"KALYPSO_FLEET_ENABLED":          "true",
		"KALYPSO_FLEET_PUBLIC_URL":       "http://" + addr,
		"KALYPSO_FLEET_CLIENT_ID":        sim.ClientID(),
		"KALYPSO_FLEET_CLIENT_SECRET":    sim.ClientSecret(),
		"KALYPSO_FLEET_SESSION_KEY":      "demo-session-key-0123456789abcdef0123",
		"KALYPSO_FLEET_REFRESH_INTERVAL": "0",
	}
}

// demoEnvironment declares an environment of the sample with a promotion.
func demoEnvironment(name, promotion string) *string {
	doc := fmt.Sprintf("apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata:\n  name: %s\nspec:\n"+
		"  controlPlane:\n    repo: https://github.com/microsoft/kalypso-control-plane\n    branch: %s\n    path: .\n  promotion:\n%s", name, name, promotion)
	return &doc
}

// hubStory has a few dozen clusters report a promotion of dev, gated at 90 %, and shows the
// verdict and where the hub answers.
func (w *demoWorld) hubStory(ctx context.Context) error {
	fmt.Fprintf(w.out, "\n4. The platform team fixes the cluster type and gates dev on its clusters' own reports\n"+
		"   (compliance.minPercent: 90, maxFailed: 1); %d clusters report with Flux's generic-hmac Provider\n", demoClusters)
	fixed := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: large\n  labels:\n    region: west-us\n    size: large\nspec:\n  reconciler: arc-flux\n  namespaceService: default\n  configType: configmap\n"
	if _, err := w.sim.CommitFiles(sample.Owner, sample.ControlPlane, "dev", map[string]*string{"cluster-types/west-us/large/large-cluster-type.yaml": &fixed}, "Fix the large cluster type"); err != nil {
		return err
	}
	main, err := w.sim.CommitFiles(sample.Owner, sample.ControlPlane, "main", map[string]*string{
		".environments/dev.yaml":   demoEnvironment("dev", "    timeout: 10m\n    compliance:\n      minPercent: 90\n      maxFailed: 1\n"),
		".environments/stage.yaml": demoEnvironment("stage", "    after: dev\n    approval: manual\n"),
	}, "Promote through dev and stage")
	if err != nil {
		return err
	}
	merge, err := w.mergeDevPR(ctx, main)
	if err != nil {
		return err
	}
	fmt.Fprintf(w.out, "   main %s is pinned into dev; its GitOps pull request is merged as %s\n", short(main), short(merge))
	if err := w.reportDemoClusters(merge); err != nil {
		return err
	}
	status, err := w.waitMainStatus(ctx, "dev", main)
	if err != nil {
		return err
	}
	fmt.Fprintf(w.out, "   status kalypso/dev on main %s: %s — %s\n", short(main), status[0], status[1])
	if d := w.deploymentVerdict(ctx, "dev", main); d != "" {
		fmt.Fprintf(w.out, "   GitHub Deployment: %s\n", d)
	}
	return w.showHub(ctx)
}

// mergeDevPR waits until dev's pull request proposes main, merges it and returns the merge.
func (w *demoWorld) mergeDevPR(ctx context.Context, main string) (string, error) {
	number := 0
	err := poll(ctx, func() bool {
		tree, err := w.sim.Tree(sample.Owner, sample.GitOpsRepo, "kalypso/dev")
		if err != nil || strings.TrimSpace(tree[".github/tracking/Promoted_Commit_Id"]) != main {
			return false
		}
		for _, pr := range w.appPRs() {
			if pr.GetHead().GetRef() == "kalypso/dev" {
				number = pr.GetNumber()
			}
		}
		return number != 0
	}, "dev's pull request to propose "+short(main))
	if err != nil {
		return "", err
	}
	return w.sim.MergePR(sample.Owner, sample.GitOpsRepo, number, "platform-lead")
}

// fluxEvent is notification-controller's event (its fields in wire order).
type fluxEvent struct {
	InvolvedObject struct {
		Kind       string `json:"kind"`
		Namespace  string `json:"namespace"`
		Name       string `json:"name"`
		APIVersion string `json:"apiVersion"`
	} `json:"involvedObject"`
	Severity            string            `json:"severity"`
	Timestamp           string            `json:"timestamp"`
	Message             string            `json:"message"`
	Reason              string            `json:"reason"`
	Metadata            map[string]string `json:"metadata"`
	ReportingController string            `json:"reportingController"`
}

// reportDemoClusters posts each cluster's signed Flux event for the merge; one fails.
func (w *demoWorld) reportDemoClusters(merge string) error {
	types := []string{"command-center", "drone", "large", "small"}
	accepted := 0
	for i := range demoClusters {
		name := fmt.Sprintf("edge-%02d", i)
		ev := fluxEvent{Severity: "info", Timestamp: time.Now().UTC().Format(time.RFC3339), Reason: "ReconciliationSucceeded",
			Message: "Reconciliation finished in 1.2s, next run in 10m0s", ReportingController: "kustomize-controller",
			Metadata: map[string]string{"cluster": name, "clusterType": types[i%len(types)], "revision": "dev@sha1:" + merge}}
		ev.InvolvedObject.Kind, ev.InvolvedObject.Namespace, ev.InvolvedObject.Name = "Kustomization", "flux-system", "gitops"
		ev.InvolvedObject.APIVersion = "kustomize.toolkit.fluxcd.io/v1"
		if name == demoFailing {
			ev.Severity, ev.Reason = "error", "HealthCheckFailed"
			ev.Message = "health check failed after 5m0s: timeout waiting for: [Deployment/dev-large-observability-prometheus/prometheus status: 'InProgress']"
		}
		body, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		req, err := http.NewRequest(http.MethodPost, "http://"+w.app+hub.ReportsPath, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(hub.HeaderSignature, hub.Sign([]byte(demoReportsSecret), body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			return fmt.Errorf("report of %s: %s %s", name, resp.Status, answer)
		}
		accepted++
	}
	fmt.Fprintf(w.out, "   %d signed reports accepted (%s reports HealthCheckFailed)\n", accepted, demoFailing)
	return nil
}

// waitMainStatus waits for the final kalypso/<env> status of a main commit.
func (w *demoWorld) waitMainStatus(ctx context.Context, env, main string) ([2]string, error) {
	var out [2]string
	err := poll(ctx, func() bool {
		for _, st := range w.sim.Statuses(sample.Owner, sample.ControlPlane, main) {
			if st.GetContext() == "kalypso/"+env {
				out = [2]string{st.GetState(), st.GetDescription()}
				return st.GetState() != "pending"
			}
		}
		return false
	}, "the gate of "+env)
	return out, err
}

// deploymentVerdict is the newest status of the GitHub Deployment of main to env, once it
// names the gate's details.
func (w *demoWorld) deploymentVerdict(ctx context.Context, env, main string) string {
	var desc string
	_ = poll(ctx, func() bool {
		for _, d := range w.sim.Deployments(sample.Owner, sample.ControlPlane) {
			if d.GetEnvironment() == env && d.GetSHA() == main {
				if st := w.sim.DeploymentStatuses(sample.Owner, sample.ControlPlane, d.GetID()); len(st) > 0 {
					desc = st[0].GetDescription()
				}
			}
		}
		return strings.Contains(desc, "registered clusters")
	}, "the deployment's verdict")
	return desc
}

// showHub signs a viewer in, reads the hub's summary of dev and prints where to look.
func (w *demoWorld) showHub(ctx context.Context) error {
	if err := w.sim.SetPermission(sample.Owner, sample.ControlPlane, demoViewer, "read"); err != nil {
		return err
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return err
	}
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := browser.Get(w.sim.URL() + "/login?user=" + demoViewer + "&return_to=" + url.QueryEscape("http://"+w.app+"/fleet/login"))
	if err != nil {
		return err
	}
	resp.Body.Close()
	var envs []hub.EnvironmentSummary
	err = poll(ctx, func() bool {
		resp, err := browser.Get("http://" + w.app + "/api/v1/hub/environments")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		envs = nil // the aggregates follow new reports within a second
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&envs) == nil && len(envs) > 0 && envs[0].Compliant > 0
	}, "the hub's answer")
	if err != nil {
		return err
	}
	fmt.Fprintln(w.out, "\nThe hub, as /api/v1/hub/environments answers it:")
	for _, e := range envs {
		fmt.Fprintf(w.out, "  %s/%s: %d registered clusters, %d compliant with GitOps %s, %d failed, %d behind\n",
			e.ControlPlane, e.Environment, e.Registered, e.Compliant, short(e.DesiredCommit), e.Failed, e.Behind)
	}
	q := "controlPlane=" + sample.Owner + "/" + sample.ControlPlane + "&environment=dev"
	fmt.Fprintf(w.out, "\nOpen the hub at http://%s/fleet/hub/environments (clusters: /fleet/hub/clusters?%s, drift, workloads,\n"+
		"comparison, history and DORA keys from there), signed in as %s through %s/login?user=%s;\n"+
		"the same answers are JSON under /api/v1/hub/. This demo app stops when the demo ends: run it with\n"+
		"`kalypso serve` and docs/hub.md to keep one.\n", w.app, q, demoViewer, w.sim.URL(), demoViewer)
	return nil
}
