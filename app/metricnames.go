package app

import (
	"strings"

	"github.com/kalypso-gitops/kalypso/internal/hub"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// MetricBuildInfo is the build information gauge, always 1, labelled with the running build.
const MetricBuildInfo = "kalypso_build_info"

// metricSpec says how one go-metrics name is exported to Prometheus. Every metric the app
// exports has one, so that its name follows Prometheus conventions (a kalypso_ prefix,
// snake_case, base units such as seconds and bytes, _total on counters and only on them) and
// it has a HELP line; TestMetricNamesFollowConventions lints them with promlint.
type metricSpec struct {
	from   string   // the go-metrics name as registered, without its [labels] suffix
	name   string   // the Prometheus family name
	kind   string   // its Prometheus type: counter, gauge, summary or histogram
	labels []string // constant labels added to every series, key then value
	scale  float64  // multiplies values into the base unit (1e-3 for milliseconds); 0 means 1
	help   string   // the HELP text
}

// metricTable lists every metric the app exports. Libraries register under their own names
// (go-githubapp's github.requests.2xx, github.event.age in milliseconds…): they are renamed
// here, at the exporter, not where they are registered. A new metric gets a row, with from
// equal to name when the code registers it under its Prometheus name.
func metricTable() []metricSpec {
	return []metricSpec{
		// The build.
		{from: MetricBuildInfo, name: MetricBuildInfo, kind: "gauge",
			help: "Always 1; the labels name the running build (version as git describe gives it, revision, Go version)."},

		// Webhooks and reconciliation (package app).
		{from: MetricWebhooksReceived, name: MetricWebhooksReceived, kind: "counter",
			help: "Webhook deliveries received, by event type (unhandled types are counted as other)."},
		{from: MetricWebhooksFailed, name: MetricWebhooksFailed, kind: "counter",
			help: "Webhook deliveries rejected or whose processing failed, by event type."},
		{from: MetricWebhooksRejected, name: MetricWebhooksRejected, kind: "counter",
			help: "Webhook deliveries refused before being queued, by reason."},
		{from: MetricReconcileDuration, name: MetricReconcileDuration, kind: "summary",
			help: "Duration of webhook processing and resync runs, by trigger and outcome."},
		{from: MetricRateLimitRemaining, name: MetricRateLimitRemaining, kind: "gauge",
			help: "Requests left in the current GitHub rate-limit window, by resource, from the latest response."},
		{from: MetricGitHubRetries, name: MetricGitHubRetries, kind: "counter",
			help: "GitHub requests retried, by reason."},
		{from: MetricConnectionsEvicted, name: MetricConnectionsEvicted, kind: "counter",
			help: "Connections of the public listener closed to make room for a new one while all server.maxConnections were taken."},

		// go-githubapp's client metrics (githubapp.ClientMetrics).
		{from: "github.requests", name: "kalypso_github_requests_total", kind: "counter",
			help: "GitHub API requests sent (each retry counts)."},
		{from: "github.requests.2xx", name: "kalypso_github_responses_total", kind: "counter", labels: []string{"class", "2xx"},
			help: "GitHub API responses, by status class."},
		{from: "github.requests.3xx", name: "kalypso_github_responses_total", kind: "counter", labels: []string{"class", "3xx"}},
		{from: "github.requests.4xx", name: "kalypso_github_responses_total", kind: "counter", labels: []string{"class", "4xx"}},
		{from: "github.requests.5xx", name: "kalypso_github_responses_total", kind: "counter", labels: []string{"class", "5xx"}},
		{from: "github.requests.cached", name: "kalypso_github_responses_cached_total", kind: "counter",
			help: "GitHub API responses served from the conditional-request cache (304 Not Modified)."},
		{from: "github.rate.limit", name: "kalypso_github_installation_rate_limit", kind: "gauge",
			help: "Size of the GitHub rate-limit window of an installation, from its latest response."},
		{from: "github.rate.remaining", name: "kalypso_github_installation_rate_limit_remaining", kind: "gauge",
			help: "Requests left in the GitHub rate-limit window of an installation, from its latest response."},

		// The work queue (package workq) and the echoes dropped before they reach it.
		{from: MetricWebhooksEchoes, name: MetricWebhooksEchoes, kind: "counter",
			help: "Deliveries of events the app's own writes caused (its check runs, pushes, pull requests, statuses), dropped before they take a slot, by event type."},
		{from: workq.MetricDepth, name: workq.MetricDepth, kind: "gauge",
			help: "Keys of work ready to run, by queue."},
		{from: workq.MetricAdds, name: workq.MetricAdds, kind: "counter",
			help: "Keys of work that became ready to run, by queue."},
		{from: workq.MetricWait, name: workq.MetricWait, kind: "summary",
			help: "Time a ready key waited for a worker, by queue."},
		{from: workq.MetricWork, name: workq.MetricWork, kind: "summary",
			help: "Time one run of work took, by queue."},
		{from: workq.MetricUnfinished, name: workq.MetricUnfinished, kind: "gauge",
			help: "Time the runs in progress have taken so far, by queue."},
		{from: workq.MetricLongestRunning, name: workq.MetricLongestRunning, kind: "gauge",
			help: "Time the longest run in progress has taken so far, by queue."},
		{from: workq.MetricRequeues, name: workq.MetricRequeues, kind: "counter",
			help: "Delayed adds of work (retries and polls), by queue."},
		{from: workq.MetricKeys, name: workq.MetricKeys, kind: "gauge",
			help: "Distinct keys of work waiting (delayed retries and polls included), by queue; bounded by queueSize."},
		{from: workq.MetricCoalesced, name: workq.MetricCoalesced, kind: "counter",
			help: "Adds of work merged into a key already waiting, by queue and kind."},
		{from: workq.MetricRetries, name: workq.MetricRetries, kind: "counter",
			help: "Failed runs of work tried again after a backoff, by queue and kind."},
		{from: workq.MetricFailures, name: workq.MetricFailures, kind: "counter",
			help: "Runs of work that failed for good (queue.maxAttempts tries), by queue and kind."},
		{from: workq.MetricKeyLatency, name: workq.MetricKeyLatency, kind: "summary",
			help: "Time from a key's first add to the end of the run that did its work, by queue and kind."},
		{from: workq.MetricRefused, name: workq.MetricRefused, kind: "counter",
			help: "Adds of new keys refused because queueSize keys were waiting, by queue."},

		// The fleet view (package fleetview).
		{from: "kalypso_fleet_promotion_state", name: "kalypso_fleet_promotion_state", kind: "gauge",
			help: "Promotion state of the commit an environment pins: 0 unknown, 1 awaiting merge, 2 waiting for clusters, 3 deployed, 4 failed, 5 superseded, 6 awaiting approval."},
		{from: "kalypso_fleet_clusters_compliant", name: "kalypso_fleet_clusters_compliant", kind: "gauge",
			help: "Clusters compliant with the commit an environment pins, as its promotion last reported."},
		{from: "kalypso_fleet_clusters_expected", name: "kalypso_fleet_clusters_expected", kind: "gauge",
			help: "Clusters an environment's promotion waits for."},
		{from: "kalypso_fleet_deployed_commit_age_seconds", name: "kalypso_fleet_deployed_commit_age_seconds", kind: "gauge",
			help: "Age of the main commit last deployed to an environment (since its commit time)."},
		{from: "kalypso_fleet_lead_time_seconds", name: "kalypso_fleet_lead_time_seconds", kind: "histogram",
			help: "Time from a main commit to its successful deployment to an environment."},

		// The Deployment Observability Hub (package hub).
		{from: hub.MetricReports, name: hub.MetricReports, kind: "counter",
			help: "Cluster reports received, by outcome (accepted, replayed, over_cap, unauthenticated, invalid, stale, unattributed, too_large, busy, error)."},
		{from: hub.MetricBatchWrite, name: hub.MetricBatchWrite, kind: "summary",
			help: "Duration of one group commit of reports to the store."},
		{from: hub.MetricClusters, name: hub.MetricClusters, kind: "gauge",
			help: "Clusters of an environment in the hub's inventory: registered, compliant with the desired GitOps commit, failed."},
		{from: hub.MetricClustersBehind, name: hub.MetricClustersBehind, kind: "gauge",
			help: "Registered clusters not on their environment's desired GitOps commit."},
		{from: hub.MetricDriftSeconds, name: hub.MetricDriftSeconds, kind: "gauge",
			help: "How long the longest-behind cluster of an environment has been behind its desired GitOps commit."},
		{from: hub.MetricDeployments, name: hub.MetricDeployments, kind: "gauge",
			help: "DORA deployment frequency: successful deployments per day over the last 30 days."},
		{from: hub.MetricLeadTime, name: hub.MetricLeadTime, kind: "gauge",
			help: "DORA lead time for changes: median time from a main commit to its deployment, last 30 days."},
		{from: hub.MetricChangeFailure, name: hub.MetricChangeFailure, kind: "gauge",
			help: "DORA change failure rate: failed deployments over finished ones, last 30 days."},
		{from: hub.MetricTimeToRestore, name: hub.MetricTimeToRestore, kind: "gauge",
			help: "DORA time to restore: median time from a failed deployment to the next success, last 30 days."},
	}
}

// metricNames indexes the table by go-metrics name, and the help texts by family.
type metricNames struct {
	byFrom map[string]metricSpec
	help   map[string]string
}

// newMetricNames indexes metricTable.
func newMetricNames() metricNames {
	n := metricNames{byFrom: map[string]metricSpec{}, help: map[string]string{}}
	for _, s := range metricTable() {
		n.byFrom[s.from] = s
		if s.help != "" {
			n.help[s.name] = s.help
		}
	}
	return n
}

// export maps a registered go-metrics name ("github.rate.remaining[installation:42]") to its
// Prometheus family, its formatted labels and the scale of its values. A name without a row is
// sanitized (dots become underscores) and has no HELP, which the conventions test reports.
func (n metricNames) export(registered string) (family string, labels []string, scale float64) {
	base, labels := splitName(registered)
	spec, ok := n.byFrom[base]
	if !ok {
		return sanitize(base), labels, 1
	}
	var constant []string
	for i := 0; i+1 < len(spec.labels); i += 2 {
		constant = append(constant, label(spec.labels[i], spec.labels[i+1]))
	}
	scale = spec.scale
	if scale == 0 {
		scale = 1
	}
	return spec.name, append(constant, labels...), scale
}

// splitName turns "a.b[k:v,k2:v2]" into "a.b" and the formatted labels.
func splitName(name string) (string, []string) {
	base, rest, found := strings.Cut(name, "[")
	if !found || !strings.HasSuffix(rest, "]") {
		return name, nil
	}
	var labels []string
	for _, kv := range strings.Split(strings.TrimSuffix(rest, "]"), ",") {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || k == "" {
			continue
		}
		labels = append(labels, label(sanitize(k), v))
	}
	return base, labels
}
