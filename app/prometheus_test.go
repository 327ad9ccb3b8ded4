package app

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/rcrowley/go-metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWritePrometheus(t *testing.T) {
	reg := metrics.NewRegistry()
	metrics.GetOrRegisterCounter("kalypso_webhooks_received_total[event:push]", reg).Inc(3)
	metrics.GetOrRegisterCounter("kalypso_webhooks_received_total[event:check_run]", reg).Inc(1)
	metrics.GetOrRegisterCounter("github.requests.2xx", reg).Inc(2)
	metrics.GetOrRegisterCounter("github.requests.5xx", reg).Inc(1)
	metrics.GetOrRegisterGauge("github.rate.remaining[installation:42]", reg).Update(4999)
	metrics.GetOrRegisterGaugeFloat64("odd-name.ratio[quote:a\"b]", reg).Update(0.25)
	metrics.NewRegisteredFunctionalGauge("kalypso_queue_depth[queue:work]", reg, func() int64 { return 2 })
	timer := metrics.GetOrRegisterTimer("kalypso_reconcile_duration_seconds[trigger:webhook,outcome:success]", reg)
	timer.Update(2 * time.Second)
	timer.Update(4 * time.Second)
	meter := metrics.GetOrRegisterMeter("2xx.meter", reg)
	meter.Mark(5)
	defer meter.Stop()

	var buf bytes.Buffer
	require.NoError(t, WritePrometheus(&buf, reg))
	want := `# TYPE _2xx_meter counter
_2xx_meter 5
# HELP kalypso_github_installation_rate_limit_remaining Requests left in the GitHub rate-limit window of an installation, from its latest response.
# TYPE kalypso_github_installation_rate_limit_remaining gauge
kalypso_github_installation_rate_limit_remaining{installation="42"} 4999
# HELP kalypso_github_responses_total GitHub API responses, by status class.
# TYPE kalypso_github_responses_total counter
kalypso_github_responses_total{class="2xx"} 2
kalypso_github_responses_total{class="5xx"} 1
# HELP kalypso_queue_depth Keys of work ready to run, by queue.
# TYPE kalypso_queue_depth gauge
kalypso_queue_depth{queue="work"} 2
# HELP kalypso_reconcile_duration_seconds Duration of webhook processing and resync runs, by trigger and outcome.
# TYPE kalypso_reconcile_duration_seconds summary
kalypso_reconcile_duration_seconds{trigger="webhook",outcome="success",quantile="0.5"} 3
kalypso_reconcile_duration_seconds{trigger="webhook",outcome="success",quantile="0.9"} 4
kalypso_reconcile_duration_seconds{trigger="webhook",outcome="success",quantile="0.99"} 4
kalypso_reconcile_duration_seconds_sum{trigger="webhook",outcome="success"} 6
kalypso_reconcile_duration_seconds_count{trigger="webhook",outcome="success"} 2
# HELP kalypso_webhooks_received_total Webhook deliveries received, by event type (unhandled types are counted as other).
# TYPE kalypso_webhooks_received_total counter
kalypso_webhooks_received_total{event="check_run"} 1
kalypso_webhooks_received_total{event="push"} 3
# TYPE odd_name_ratio gauge
odd_name_ratio{quote="a\"b"} 0.25
`
	assert.Equal(t, want, buf.String())
}

func TestFormatFloat(t *testing.T) {
	assert.Equal(t, "NaN", formatFloat(math.NaN()))
	assert.Equal(t, "+Inf", formatFloat(math.Inf(1)))
	assert.Equal(t, "1e+21", formatFloat(1e21))
	assert.Equal(t, "0.001", formatFloat(0.001))
}

func TestLRUCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newLRUCache(10)
	c.Set("a", []byte("1234"))
	c.Set("b", []byte("1234"))
	_, ok := c.Get("a") // a is now the most recent
	require.True(t, ok)
	c.Set("c", []byte("1234")) // 12 bytes: evicts b
	_, ok = c.Get("b")
	assert.False(t, ok)
	for _, k := range []string{"a", "c"} {
		_, ok := c.Get(k)
		assert.True(t, ok, k)
	}
	c.Set("huge", []byte("0123456789x"))
	_, ok = c.Get("huge")
	assert.False(t, ok, "larger than the cache")
	c.Set("a", []byte("12345678"))
	assert.Equal(t, 8, c.size, fmt.Sprint(c.items))
	c.Delete("a")
	assert.Equal(t, 0, c.size)
}

// fixedHistogram is a BucketHistogram that a go-metrics registry accepts.
type fixedHistogram struct{ metrics.NilHistogram }

// Buckets implements BucketHistogram.
func (fixedHistogram) Buckets() ([]float64, []uint64, float64, uint64) {
	return []float64{60, 300}, []uint64{1, 3}, 700, 4
}

func TestWritePrometheusBucketHistogram(t *testing.T) {
	reg := metrics.NewRegistry()
	require.NoError(t, reg.Register("kalypso_fleet_lead_time_seconds", fixedHistogram{}))
	var buf bytes.Buffer
	require.NoError(t, WritePrometheus(&buf, reg))
	require.Equal(t, `# HELP kalypso_fleet_lead_time_seconds Time from a main commit to its successful deployment to an environment.
# TYPE kalypso_fleet_lead_time_seconds histogram
kalypso_fleet_lead_time_seconds_bucket{le="60"} 1
kalypso_fleet_lead_time_seconds_bucket{le="300"} 3
kalypso_fleet_lead_time_seconds_bucket{le="+Inf"} 4
kalypso_fleet_lead_time_seconds_sum 700
kalypso_fleet_lead_time_seconds_count 4
`, buf.String())
}
