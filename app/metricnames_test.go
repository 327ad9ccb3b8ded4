package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/rcrowley/go-metrics"
	"github.com/stretchr/testify/require"
)

// lintExposition runs Prometheus's own metric linter (what `promtool check metrics` runs) on
// an exposition and returns its problems as "metric: text".
func lintExposition(t *testing.T, exposition []byte) []string {
	t.Helper()
	problems, err := promlint.New(bytes.NewReader(exposition)).Lint()
	require.NoError(t, err, "the exposition parses:\n%s", exposition)
	var out []string
	for _, p := range problems {
		out = append(out, p.Metric+": "+p.Text)
	}
	return out
}

// registerLike registers a go-metrics value of the kind a table row declares, with a label.
func registerLike(t *testing.T, reg metrics.Registry, spec metricSpec) {
	t.Helper()
	name := spec.from + "[env:dev]"
	switch spec.kind {
	case "counter":
		metrics.GetOrRegisterCounter(name, reg).Inc(1)
	case "gauge":
		metrics.GetOrRegisterGauge(name, reg).Update(1)
	case "summary":
		metrics.GetOrRegisterTimer(name, reg).Update(1500)
	case "histogram":
		require.NoError(t, reg.Register(name, fixedHistogram{}))
	default:
		t.Fatalf("%s: kind %q is not counter, gauge, summary or histogram", spec.from, spec.kind)
	}
}

// Every row of the metric table exports a family that Prometheus's linter accepts: kalypso_
// prefix, snake_case, base units, _total on counters only, and a HELP text.
func TestMetricNamesFollowConventions(t *testing.T) {
	reg := metrics.NewRegistry()
	for _, spec := range metricTable() {
		registerLike(t, reg, spec)
		require.True(t, strings.HasPrefix(spec.name, "kalypso_"), "%s: every exported family starts with kalypso_", spec.name)
	}
	var buf bytes.Buffer
	require.NoError(t, WritePrometheus(&buf, reg))
	require.Empty(t, lintExposition(t, buf.Bytes()), buf.String())
	for _, spec := range metricTable() {
		require.Contains(t, buf.String(), "# TYPE "+spec.name+" "+spec.kind+"\n", "the declared kind is the exported type")
	}
}

// The linter is not lenient: the names the app exported before the renames fail it.
func TestMetricLinterCatchesUnconventionalNames(t *testing.T) {
	reg := metrics.NewRegistry()
	metrics.GetOrRegisterCounter("github.requests.unknown", reg).Inc(1)
	metrics.GetOrRegisterGauge("kalypso_queue_wait_ms", reg).Update(3)
	metrics.GetOrRegisterGauge("kalypso_pins_total", reg).Update(3)
	var buf bytes.Buffer
	require.NoError(t, WritePrometheus(&buf, reg))
	problems := strings.Join(lintExposition(t, buf.Bytes()), "\n")
	for _, want := range []string{
		`github_requests_unknown: counter metrics should have "_total" suffix`,
		"github_requests_unknown: no help text",
		"kalypso_queue_wait_ms: metric names should not contain abbreviated units",
		`kalypso_pins_total: non-counter metrics should not have "_total" suffix`,
	} {
		require.Contains(t, problems, want)
	}
}

// Every metric go-githubapp registers has a row, so none reaches /metrics under its library name.
func TestEveryGoGitHubAppMetricIsRenamed(t *testing.T) {
	names := newMetricNames()
	for _, key := range []string{
		githubapp.MetricsKeyRequests, githubapp.MetricsKeyRequests2xx, githubapp.MetricsKeyRequests3xx,
		githubapp.MetricsKeyRequests4xx, githubapp.MetricsKeyRequests5xx, githubapp.MetricsKeyRequestsCached,
		githubapp.MetricsKeyRateLimit, githubapp.MetricsKeyRateLimitRemaining,
	} {
		_, ok := names.byFrom[key]
		require.True(t, ok, "%s has a row in metricTable", key)
	}
}
