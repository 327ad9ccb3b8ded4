package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// What the running app exports on /metrics — webhooks, reconciles, GitHub calls, the queue,
// the fleet gauges, the hub's reports and the build — passes Prometheus's metric linter (what `promtool check
// metrics` runs): every family is named kalypso_…, has a HELP text, uses base units and ends
// in _total exactly when it is a counter.
func TestE2EMetricsFollowPrometheusConventions(t *testing.T) {
	w := fleetWorld(t, "KALYPSO_REPORTS_SECRET="+reportSecret)
	w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Development"))})
	w.settle()
	w.report("c-001", "large", w.head("dev"), false)
	var body string
	w.eventually(func() bool {
		_, body, _ = getURL("http://" + w.mgmt + "/metrics")
		return strings.Contains(body, "kalypso_fleet_promotion_state{") && strings.Contains(body, "kalypso_queue_wait_seconds_count") &&
			strings.Contains(body, "kalypso_hub_reports_total{") && strings.Contains(body, "kalypso_hub_batch_write_seconds")
	}, "the fleet gauges, the queue metrics and the hub's are exported")

	problems, err := promlint.New(strings.NewReader(body)).Lint()
	require.NoError(t, err, body)
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	families := regexp.MustCompile(`(?m)^# TYPE (\S+) `).FindAllStringSubmatch(body, -1)
	require.Greater(t, len(families), 15)
	for _, f := range families {
		require.True(t, strings.HasPrefix(f[1], "kalypso_"), "%s: every family is the app's", f[1])
	}
	require.Regexp(t, `kalypso_build_info\{version="[^"]+",revision="[^"]+",goversion="go[^"]+"\} 1\n`, body)
}

// The first line `kalypso serve` logs names the build; with no control plane declared, a
// warning follows, since nothing would be reconciled.
func TestE2EServeLogsItsVersionFirst(t *testing.T) {
	w := newWorld(t)
	w.start()
	first := strings.SplitN(w.logs.String(), "\n", 2)[0]
	require.Contains(t, first, `"message":"kalypso starting"`)
	require.Regexp(t, `"version":"[^"]+","commit":"[^"]+","built":"[^"]+","go":"go`, first)
	require.NotContains(t, w.logs.String(), "controlPlanes is empty")

	w.stop()
	before := len(w.logs.String())
	w.launch("KALYPSO_CONTROL_PLANES=")
	w.eventually(func() bool { return strings.Contains(w.logs.String()[before:], "controlPlanes is empty") }, "the warning")
	lines := strings.Split(w.logs.String()[before:], "\n")
	require.Contains(t, lines[0], `"message":"kalypso starting"`)
	require.Contains(t, lines[1], `"level":"warn"`)
	require.Contains(t, lines[1], "nothing is reconciled")
}
