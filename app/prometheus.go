package app

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/rcrowley/go-metrics"
)

// quantiles returns the quantiles exported for timers and histograms.
func quantiles() []float64 { return []float64{0.5, 0.9, 0.99} }

// family is one Prometheus metric family: a type and, per series, its sample lines.
type family struct {
	typ    string
	series [][]string
}

// serveMetrics renders the registry for Prometheus.
func (s *Server) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if err := WritePrometheus(w, s.registry); err != nil {
		s.logger.Warn().Err(err).Msg("writing metrics failed")
	}
}

// WritePrometheus writes reg in the Prometheus text exposition format.
// Names are sanitized (github.requests.2xx becomes github_requests_2xx) and a
// "[key:value,...]" suffix becomes labels. Counters and meters are counters,
// gauges are gauges, timers (in seconds) and histograms are summaries.
func WritePrometheus(w io.Writer, reg metrics.Registry) error {
	families := map[string]*family{}
	reg.Each(func(name string, m any) {
		base, labels := splitName(name)
		typ, samples := render(base, labels, m)
		if typ == "" {
			return
		}
		f := families[base]
		if f == nil {
			f = &family{typ: typ}
			families[base] = f
		}
		if f.typ == typ {
			f.series = append(f.series, samples)
		}
	})
	return writeFamilies(w, families)
}

// writeFamilies writes the families sorted by name, and their series sorted by labels.
func writeFamilies(w io.Writer, families map[string]*family) error {
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	bw := bufio.NewWriter(w)
	for _, n := range names {
		f := families[n]
		sort.Slice(f.series, func(i, j int) bool { return f.series[i][0] < f.series[j][0] })
		if help := metricHelp(n); help != "" {
			fmt.Fprintf(bw, "# HELP %s %s\n", n, help)
		}
		fmt.Fprintf(bw, "# TYPE %s %s\n", n, f.typ)
		for _, lines := range f.series {
			for _, line := range lines {
				bw.WriteString(line)
				bw.WriteByte('\n')
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write metrics: %w", err)
	}
	return nil
}

// render returns the Prometheus type and sample lines of one go-metrics value.
func render(name string, labels []string, m any) (string, []string) {
	switch v := m.(type) {
	case metrics.Counter:
		return "counter", []string{sample(name, labels, float64(v.Count()))}
	case metrics.Meter:
		return "counter", []string{sample(name, labels, float64(v.Snapshot().Count()))}
	case metrics.Gauge:
		return "gauge", []string{sample(name, labels, float64(v.Value()))}
	case metrics.GaugeFloat64:
		return "gauge", []string{sample(name, labels, v.Value())}
	case metrics.Timer:
		t := v.Snapshot()
		return "summary", summary(name, labels, t.Percentiles(quantiles()), float64(t.Sum()), t.Count(), 1e-9)
	case BucketHistogram:
		return "histogram", histogram(name, labels, v)
	case metrics.Histogram:
		h := v.Snapshot()
		return "summary", summary(name, labels, h.Percentiles(quantiles()), float64(h.Sum()), h.Count(), 1)
	}
	return "", nil
}

// BucketHistogram is a histogram with fixed buckets, exported as a Prometheus histogram.
type BucketHistogram interface {
	// Buckets returns the upper bounds, the cumulative count of each, the sum and the count.
	Buckets() (bounds []float64, cumulative []uint64, sum float64, count uint64)
}

// histogram renders the _bucket lines, +Inf included, _sum and _count.
func histogram(name string, labels []string, h BucketHistogram) []string {
	bounds, counts, sum, count := h.Buckets()
	out := make([]string, 0, len(bounds)+3)
	for i, b := range bounds {
		bl := append(append([]string(nil), labels...), label("le", formatFloat(b)))
		out = append(out, sample(name+"_bucket", bl, float64(counts[i])))
	}
	inf := append(append([]string(nil), labels...), label("le", "+Inf"))
	out = append(out, sample(name+"_bucket", inf, float64(count)))
	out = append(out, sample(name+"_sum", labels, sum))
	return append(out, sample(name+"_count", labels, float64(count)))
}

// summary renders quantiles, _sum and _count, multiplying values by scale.
func summary(name string, labels []string, ps []float64, sum float64, count int64, scale float64) []string {
	out := make([]string, 0, len(ps)+2)
	for i, q := range quantiles() {
		ql := append(append([]string(nil), labels...), label("quantile", formatFloat(q)))
		out = append(out, sample(name, ql, ps[i]*scale))
	}
	out = append(out, sample(name+"_sum", labels, sum*scale))
	return append(out, sample(name+"_count", labels, float64(count)))
}

// sample formats one sample line.
func sample(name string, labels []string, v float64) string {
	if len(labels) == 0 {
		return name + " " + formatFloat(v)
	}
	return name + "{" + strings.Join(labels, ",") + "} " + formatFloat(v)
}

// splitName turns "a.b[k:v,k2:v2]" into "a_b" and the formatted labels.
func splitName(name string) (string, []string) {
	base, rest, found := strings.Cut(name, "[")
	if !found || !strings.HasSuffix(rest, "]") {
		return sanitize(name), nil
	}
	var labels []string
	for _, kv := range strings.Split(strings.TrimSuffix(rest, "]"), ",") {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || k == "" {
			continue
		}
		labels = append(labels, label(sanitize(k), v))
	}
	return sanitize(base), labels
}

// label formats key="value" with the value escaped.
func label(key, value string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return key + `="` + r.Replace(value) + `"`
}

// sanitize maps a name onto [a-zA-Z_:][a-zA-Z0-9_:]*.
func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
		return "_" + string(b)
	}
	return string(b)
}

// formatFloat formats a sample value the way Prometheus parses it.
func formatFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// metricHelp describes the app's own metrics.
func metricHelp(name string) string {
	switch name {
	case MetricWebhooksReceived:
		return "Webhook deliveries received, by event type (unhandled types are counted as other)."
	case MetricWebhooksFailed:
		return "Webhook deliveries rejected or whose processing failed, by event type."
	case MetricWebhooksRejected:
		return "Webhook deliveries refused before being queued, by reason."
	case MetricReconcileDuration:
		return "Duration of webhook processing and resync runs, by trigger and outcome."
	case MetricRateLimitRemaining:
		return "Requests left in the current GitHub rate-limit window, by resource, from the latest response."
	case MetricGitHubRetries:
		return "GitHub requests retried, by reason."
	case "kalypso_fleet_promotion_state":
		return "Promotion state of the commit an environment pins: 0 unknown, 1 awaiting merge, 2 waiting for clusters, 3 deployed, 4 failed, 5 superseded, 6 awaiting approval."
	case "kalypso_fleet_clusters_compliant":
		return "Clusters compliant with the commit an environment pins, as its promotion last reported."
	case "kalypso_fleet_clusters_expected":
		return "Clusters an environment's promotion waits for."
	case "kalypso_fleet_deployed_commit_age_seconds":
		return "Age of the main commit last deployed to an environment (since its commit time)."
	case "kalypso_fleet_lead_time_seconds":
		return "Time from a main commit to its successful deployment to an environment."
	}
	return hubHelp(name)
}

// hubHelp describes the metrics of the Deployment Observability Hub.
func hubHelp(name string) string {
	switch name {
	case "kalypso_hub_reports_total":
		return "Cluster reports received, by outcome (accepted, replayed, over_cap, unauthenticated, invalid, stale, unattributed, too_large, busy, error)."
	case "kalypso_hub_batch_write_seconds":
		return "Duration of one group commit of reports to the store."
	case "kalypso_hub_clusters":
		return "Clusters of an environment in the hub's inventory: registered, compliant with the desired GitOps commit, failed."
	case "kalypso_hub_clusters_behind":
		return "Registered clusters not on their environment's desired GitOps commit."
	case "kalypso_hub_drift_seconds":
		return "How long the longest-behind cluster of an environment has been behind its desired GitOps commit."
	case "kalypso_hub_deployments_per_day":
		return "DORA deployment frequency: successful deployments per day over the last 30 days."
	case "kalypso_hub_lead_time_seconds":
		return "DORA lead time for changes: median time from a main commit to its deployment, last 30 days."
	case "kalypso_hub_change_failure_ratio":
		return "DORA change failure rate: failed deployments over finished ones, last 30 days."
	case "kalypso_hub_time_to_restore_seconds":
		return "DORA time to restore: median time from a failed deployment to the next success, last 30 days."
	}
	return ""
}
