package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/hub"
	"github.com/kalypso-gitops/kalypso/internal/pgtest"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// reportSecret is the HMAC key of the e2e clusters' Flux Provider.
const reportSecret = "e2e-flux-generic-hmac-key"

// devClusterTypes are the cluster types of the sample's dev environment.
var devClusterTypes = []string{"command-center", "drone", "large", "small"}

// fluxEvent is a notification-controller event exactly as Flux sends it (field order,
// compact JSON) for a Kustomization of cluster that applied sha of the dev branch.
func fluxEvent(cluster, clusterType, sha string, failed bool, at time.Time) []byte {
	severity, reason, msg := "info", "ReconciliationSucceeded", "Reconciliation finished in 1.482733s, next run in 10m0s"
	commitStatus := `"commit_status":"update",`
	if failed {
		severity, reason, msg, commitStatus = "error", "HealthCheckFailed", "health check failed after 5m0.031284566s: timeout waiting for: [Deployment/dev/podinfo status: 'InProgress']", ""
	}
	return []byte(fmt.Sprintf(`{"involvedObject":{"kind":"Kustomization","namespace":"flux-system","name":"gitops-dev","uid":"0f3c8a52-9b1e-4d7a-a6c4-2e5b7d9f1a38","apiVersion":"kustomize.toolkit.fluxcd.io/v1","resourceVersion":"4821937"},`+
		`"severity":%q,"timestamp":%q,"message":%q,"reason":%q,"metadata":{"cluster":%q,"clusterType":%q,%s"revision":"dev@sha1:%s"},`+
		`"reportingController":"kustomize-controller","reportingInstance":"kustomize-controller-6b8f9d7c5-x7k2p"}`,
		severity, at.UTC().Format(time.RFC3339), msg, reason, cluster, clusterType, commitStatus, sha))
}

// postReport sends a report as notification-controller does and returns the status code.
func (w *world) postReport(body []byte, headers map[string]string) (int, string) {
	w.t.Helper()
	return w.postReportTo(w.addr, body, headers)
}

// postReportTo sends a report to the app listening at addr.
func (w *world) postReportTo(addr string, body []byte, headers map[string]string) (int, string) {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+hub.ReportsPath, bytes.NewReader(body))
	require.NoError(w.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Gotk-Component", "kustomize-controller")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(w.t, err)
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(answer)
}

// report signs and sends one cluster's event and requires it to be accepted.
func (w *world) report(cluster, clusterType, sha string, failed bool) {
	w.t.Helper()
	body := fluxEvent(cluster, clusterType, sha, failed, time.Now())
	code, answer := w.postReport(body, map[string]string{hub.HeaderSignature: hub.Sign([]byte(reportSecret), body)})
	require.Equal(w.t, http.StatusAccepted, code, "report of %s: %s", cluster, answer)
}

// reportAll sends the events of clusters (four at a time), all on sha and successful.
func (w *world) reportAll(clusters []string, sha string) {
	w.t.Helper()
	var wg sync.WaitGroup
	work := make(chan int, len(clusters)) // filled at once: a worker stopped by a failure blocks nothing
	for i := range clusters {
		work <- i
	}
	close(work)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				w.report(clusters[i], devClusterTypes[i%len(devClusterTypes)], sha, false)
			}
		}()
	}
	wg.Wait()
}

// hubFleet names n clusters: the first silent ones sort before the others, so that a verdict
// naming the first ten stragglers names them.
func hubFleet(silent, others int) (quiet, loud []string) {
	for i := range silent {
		quiet = append(quiet, fmt.Sprintf("a-silent-%02d", i))
	}
	for i := range others {
		loud = append(loud, fmt.Sprintf("c-%03d", i))
	}
	return quiet, loud
}

func devGate(extra string) string {
	return "    timeout: 10m\n    compliance:\n      minPercent: 95\n      maxFailed: 0\n" + extra
}

func TestE2EHubGateOnSQLite(t *testing.T) {
	hubGateScenario(t, "KALYPSO_STORE_PATH="+t.TempDir()+"/hub.db")
}

func TestE2EHubGateOnPostgreSQL(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	hubGateScenario(t, "KALYPSO_STORE_DRIVER=postgres", "KALYPSO_STORE_URL="+url)
}

// hubGateScenario drives three promotions of dev gated at minPercent 95 over 300 clusters
// reporting in Flux's signed event format: all of them, with the app killed and restarted
// in the middle; then with 10 silent clusters (promotes, names them); then with a failing one
// beyond maxFailed (fails, names it). The compliance poll is slower than the test, so every
// decision comes from a report waking the gate.
func hubGateScenario(t *testing.T, storeEnv ...string) {
	w := newWorld(t)
	// The restarted app keeps its name, as a restarted container of a pod does: it takes its
	// leases in the store back at once.
	env := append(storeEnv, "KALYPSO_STORE_REPLICA_NAME=e2e-app", "KALYPSO_REPORTS_SECRET="+reportSecret, "KALYPSO_PROMOTION_POLL_INTERVAL=10m",
		"KALYPSO_REPORTS_MAX_CLUSTERS_PER_ENVIRONMENT=300")
	w.start(env...)
	quiet, loud := hubFleet(10, 290)
	all := append(append([]string{}, quiet...), loud...)

	// 1. Every cluster reports; a restart in the middle loses nothing.
	main1 := w.declareChain(devGate("      minClusters: 300\n"), stageManual)
	merge1 := w.mergeEnvPR("dev", main1)
	w.reportAll(all[:150], merge1)
	w.waitStatus("dev", main1, "pending", "150/300 clusters compliant")
	w.kill()
	w.start(env...)
	w.reportAll(all[150:], merge1)
	w.waitStatus("dev", main1, "success", "deployed to 300 clusters")
	w.reportRefusals(merge1)

	// 2. Ten clusters stay silent: 290 of 300 is at least 95 %, the verdict names them.
	main2 := w.commit(sample.ControlPlane, "main", map[string]*string{".environments/dev.yaml": str(environmentDoc("dev", devGate("")))})
	merge2 := w.mergeEnvPR("dev", main2)
	w.reportAll(loud, merge2)
	w.waitStatus("dev", main2, "success", "deployed to")
	w.eventually(func() bool {
		return strings.Contains(w.logs.String(), "not compliant: "+strings.Join(quiet, ", "))
	}, "the verdict names the ten silent clusters")
	w.eventually(func() bool {
		return strings.Contains(w.deploymentStatus("dev", main2), "not compliant: a-silent-00, a-silent-01")
	}, "the GitHub Deployment names them too")

	// 3. One cluster fails, beyond maxFailed 0: the gate fails and names it.
	main3 := w.commit(sample.ControlPlane, "main", map[string]*string{".environments/dev.yaml": str(environmentDoc("dev", devGate("      minClusters: 1\n")))})
	merge3 := w.mergeEnvPR("dev", main3)
	w.report("c-007", "large", merge3, true)
	w.reportAll(loud[10:], merge3)
	w.waitStatus("dev", main3, "failure", "cluster c-007 failed")
	w.eventually(func() bool {
		return strings.Contains(w.deploymentStatus("dev", main3), "1 failed, more than maxFailed 0: c-007")
	}, "the GitHub Deployment names the failed cluster")
}

// reportRefusals plays the attacker against the reports endpoint: forged, unsigned, replayed and
// over-cap reports are refused with their reason.
func (w *world) reportRefusals(sha string) {
	w.t.Helper()
	body := fluxEvent("c-001", "large", sha, false, time.Now())
	code, answer := w.postReport(body, nil)
	require.Equal(w.t, http.StatusUnauthorized, code, "unsigned: %s", answer)
	code, answer = w.postReport(body, map[string]string{hub.HeaderSignature: hub.Sign([]byte("a-guessed-key"), body)})
	require.Equal(w.t, http.StatusUnauthorized, code, "forged: %s", answer)
	signed := map[string]string{hub.HeaderSignature: hub.Sign([]byte(reportSecret), body)}
	code, answer = w.postReport(body, signed)
	require.Equal(w.t, http.StatusAccepted, code, answer)
	code, answer = w.postReport(body, signed)
	require.Equal(w.t, http.StatusConflict, code, "replayed: %s", answer)
	extra := fluxEvent("z-301", "large", sha, false, time.Now())
	code, answer = w.postReport(extra, map[string]string{hub.HeaderSignature: hub.Sign([]byte(reportSecret), extra)})
	require.Equal(w.t, http.StatusForbidden, code, "over the cap: %s", answer)
	require.Contains(w.t, answer, "reports.maxClustersPerEnvironment")
	stale := fluxEvent("c-002", "large", sha, false, time.Now().Add(-time.Hour))
	code, answer = w.postReport(stale, map[string]string{hub.HeaderSignature: hub.Sign([]byte(reportSecret), stale)})
	require.Equal(w.t, http.StatusBadRequest, code, "stale: %s", answer)
}

// deploymentStatus is the description of the newest status of the newest GitHub Deployment
// of a main commit to env.
func (w *world) deploymentStatus(env, sha string) string {
	w.t.Helper()
	for _, d := range w.sim.Deployments(sample.Owner, sample.ControlPlane) {
		if d.GetEnvironment() == env && d.GetSHA() == sha {
			statuses := w.sim.DeploymentStatuses(sample.Owner, sample.ControlPlane, d.GetID())
			require.NotEmpty(w.t, statuses)
			return statuses[0].GetDescription()
		}
	}
	w.t.Fatalf("no deployment of %s to %s", sha[:7], env)
	return ""
}
