package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/hub"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// The demo's hub: the key its clusters sign reports with, how many report, and which fails.
const (
	demoReportsSecret = "demo-flux-generic-hmac-key"
	demoClusters      = 36
	demoFailing       = "edge-07"
)

// hubAct gates dev on its clusters' own reports: a few dozen clusters report the merge of a
// new main commit with Flux's signed events (one failing), the fractional gate decides, and
// the hub answers what runs where.
func (w *demoWorld) hubAct(ctx context.Context) error {
	fmt.Fprintf(w.out, "\n1. The platform team gates dev on its clusters' own reports (compliance.minPercent: 90, maxFailed: 1)\n")
	dev := demoEnvironment("dev", "    timeout: 5m\n    compliance:\n      minPercent: 90\n      maxFailed: 1\n", "    maxRemoved: 50%\n")
	sha, err := w.sim.CommitFiles(sample.Owner, sample.ControlPlane, "main", map[string]*string{".environments/dev.yaml": &dev}, "Gate dev at 90 %")
	if err != nil {
		return err
	}
	pr, err := w.waitProposed(ctx, "dev", sha)
	if err != nil {
		return err
	}
	merge, err := w.sim.MergePR(sample.Owner, sample.GitOpsRepo, pr.GetNumber(), demoUser)
	if err != nil {
		return err
	}
	fmt.Fprintf(w.out, "  main %s is pinned into dev; %s merges pull request #%d as %s.\n", short(sha), demoUser, pr.GetNumber(), short(merge))

	fmt.Fprintf(w.out, "\n2. %d clusters report the merge with Flux's generic-hmac Provider\n", demoClusters)
	if err := w.reportDemoClusters(ctx, merge); err != nil {
		return err
	}
	if err := poll(ctx, func() bool { st := w.mainStatus("dev", sha); return st != nil && st.GetState() != "pending" },
		"the gate of dev"); err != nil {
		return err
	}
	w.showStatus("dev", sha)
	if d := w.deploymentVerdict(ctx, "dev", sha); d != "" {
		fmt.Fprintf(w.out, "  GitHub Deployment: %s\n", d)
	}
	return w.showHub(ctx)
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
func (w *demoWorld) reportDemoClusters(ctx context.Context, merge string) error {
	types := []string{"command-center", "drone", "large", "small"}
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
		if err := w.report(ctx, ev); err != nil {
			return fmt.Errorf("report of %s: %w", name, err)
		}
	}
	fmt.Fprintf(w.out, "  %d signed reports accepted (%s reports HealthCheckFailed)\n", demoClusters, demoFailing)
	return nil
}

// report posts one signed Flux event to the app's reports endpoint.
func (w *demoWorld) report(ctx context.Context, ev fluxEvent) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+w.appAddr+hub.ReportsPath, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(hub.HeaderSignature, hub.Sign([]byte(demoReportsSecret), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("%s %s", resp.Status, answer)
	}
	return nil
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

// showHub reads the hub's summary of the environments as the signed-in demo user and prints
// where to look.
func (w *demoWorld) showHub(ctx context.Context) error {
	browser, err := w.signIn(ctx)
	if err != nil {
		return err
	}
	var envs []hub.EnvironmentSummary
	err = poll(ctx, func() bool {
		body, err := get(ctx, browser, "http://"+w.appAddr+"/api/v1/hub/environments")
		envs = nil // the aggregates follow new reports within a second
		return err == nil && json.Unmarshal([]byte(body), &envs) == nil && len(envs) > 0 && envs[0].Compliant > 0
	}, "the hub's answer")
	if err != nil {
		return err
	}
	fmt.Fprintln(w.out, "\n3. The hub, as /api/v1/hub/environments answers it:")
	for _, e := range envs {
		fmt.Fprintf(w.out, "  %s/%s: %d registered clusters, %d compliant with GitOps %s, %d failed, %d behind\n",
			e.ControlPlane, e.Environment, e.Registered, e.Compliant, short(e.DesiredCommit), e.Failed, e.Behind)
	}
	fmt.Fprintf(w.out, "  Its pages are at %s/hub/environments (clusters, drift, workloads, comparison, history and DORA keys\n"+
		"  from there), behind the fleet page's sign-in; the same answers are JSON under /api/v1/hub/.\n", w.fleetURL())
	return nil
}
