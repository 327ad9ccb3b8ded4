package deploy

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kalypso-gitops/kalypso/internal/hub"
)

// TestHelmHubStoreAndSecret checks the hub's chart values: the SQLite file's folder on a
// volume (an existing claim), and the report credentials and PostgreSQL URL from an
// existing Secret reaching the app's settings.
func TestHelmHubStoreAndSecret(t *testing.T) {
	out, err := helmTemplate(t, "--set", "config.github.app.integrationID=1234567", "--set", "github.existingSecret=kalypso-github",
		"--set", "config.store.path=/var/lib/kalypso/hub.db", "--set", "hub.storeVolume.existingClaim=kalypso-hub",
		"--set", "hub.existingSecret=kalypso-hub")
	if err != nil {
		t.Fatal(err)
	}
	r := mustDecode(t, out)
	checkWorkload(t, r)
	d, c := r.deployment(t)
	mount, vol := mountFor(t, d, c, "/var/lib/kalypso/hub.db")
	if mount.ReadOnly || vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != "kalypso-hub" {
		t.Errorf("the store's folder is mounted from %+v, want the writable claim kalypso-hub", vol.VolumeSource)
	}
	p := podView(t, r, map[string]map[string]string{
		"kalypso-github": {"private-key.pem": "fake-key", "webhook-secret": "s3cret"},
		"kalypso-hub": {"reports-secret": "a-reports-hmac-key", "reports-bearer-token": "an-argo-cd-bearer-token",
			"reports-control-planes": `{"org/cp":{"secret":"cp-own-hmac-key-0"}}`, "store-url": "postgres://k@db/k"},
	})
	cfg, err := p.load()
	if err != nil {
		t.Fatalf("the pod's settings do not load: %v", err)
	}
	if cfg.Reports.Secret.Value() != "a-reports-hmac-key" || cfg.Reports.BearerToken.Value() != "an-argo-cd-bearer-token" ||
		cfg.Reports.ReportCredentialsFor("org/cp").Secret.Value() != "cp-own-hmac-key-0" || cfg.Store.URL.Value() != "postgres://k@db/k" {
		t.Error("the hub Secret's keys do not reach the app's settings")
	}
	if cfg.Store.Path != "/var/lib/kalypso/hub.db" {
		t.Errorf("store.path %q", cfg.Store.Path)
	}
}

// TestHelmHubRefusesSharedSQLite checks that an SQLite file is not given to several replicas.
func TestHelmHubRefusesSharedSQLite(t *testing.T) {
	_, err := helmTemplate(t, "--set", "replicaCount=2", "--set", "config.store.path=/var/lib/kalypso/hub.db")
	if err == nil || !strings.Contains(err.Error(), "serves one replica") {
		t.Errorf("got %v, want a refusal of an SQLite file for two replicas", err)
	}
	if _, err := helmTemplate(t, "--set", "replicaCount=2", "--set", "config.store.path=/x/hub.db", "--set", "config.store.driver=postgres"); err != nil {
		t.Errorf("PostgreSQL with two replicas: %v", err)
	}
}

// TestHelmGrafanaDashboard checks the dashboard ConfigMap: labelled for Grafana's sidecar,
// valid JSON, every query over a metric the app exports.
func TestHelmGrafanaDashboard(t *testing.T) {
	out, err := helmTemplate(t, "--set", "hub.grafanaDashboard.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	r := mustDecode(t, out)
	cm := r.configMap("kalypso-hub-dashboard")
	if cm == nil {
		t.Fatalf("no dashboard ConfigMap; rendered %v", r.kindCounts())
	}
	if cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("labels %v: want grafana_dashboard: \"1\"", cm.Labels)
	}
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(cm.Data["kalypso-hub.json"]), &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	known := []string{hub.MetricReports, hub.MetricBatchWrite, hub.MetricClusters, hub.MetricClustersBehind, hub.MetricDriftSeconds,
		hub.MetricDeployments, hub.MetricLeadTime, hub.MetricChangeFailure, hub.MetricTimeToRestore, "kalypso_fleet_promotion_state"}
	metric := regexp.MustCompile(`kalypso_[a-z_]+`)
	queries := 0
	for _, p := range dash.Panels {
		for _, q := range p.Targets {
			queries++
			for _, m := range metric.FindAllString(q.Expr, -1) {
				if !slices.Contains(known, m) {
					t.Errorf("panel %q queries %s, which the app does not export", p.Title, m)
				}
			}
		}
	}
	if dash.UID != "kalypso-hub" || queries < 8 {
		t.Errorf("dashboard %q with %d queries", dash.UID, queries)
	}
}
