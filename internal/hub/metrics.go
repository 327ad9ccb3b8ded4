package hub

import (
	"sync"

	"github.com/rcrowley/go-metrics"
)

// Metric names of the hub; labels are appended as name[key:value,...].
const (
	MetricReports        = "kalypso_hub_reports_total"
	MetricBatchWrite     = "kalypso_hub_batch_write_seconds"
	MetricClusters       = "kalypso_hub_clusters"
	MetricClustersBehind = "kalypso_hub_clusters_behind"
	MetricDriftSeconds   = "kalypso_hub_drift_seconds"
	MetricDeployments    = "kalypso_hub_deployments_total"
	MetricLeadTime       = "kalypso_hub_lead_time_seconds"
	MetricChangeFailure  = "kalypso_hub_change_failure_ratio"
	MetricTimeToRestore  = "kalypso_hub_time_to_restore_seconds"
)

// hubMetrics holds the counters of the reports endpoint.
type hubMetrics struct {
	reg   metrics.Registry
	batch metrics.Timer
	mu    sync.Mutex
	by    map[string]metrics.Counter
}

func newHubMetrics(reg metrics.Registry) *hubMetrics {
	return &hubMetrics{reg: reg, batch: metrics.GetOrRegisterTimer(MetricBatchWrite, reg), by: map[string]metrics.Counter{}}
}

// count adds one report with its outcome.
func (m *hubMetrics) count(outcome string) {
	m.mu.Lock()
	c := m.by[outcome]
	if c == nil {
		c = metrics.GetOrRegisterCounter(MetricReports+"[outcome:"+outcome+"]", m.reg)
		m.by[outcome] = c
	}
	m.mu.Unlock()
	c.Inc(1)
}

// use moves the counters to reg (the registry exported on /metrics).
func (m *hubMetrics) use(reg metrics.Registry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reg = reg
	_ = reg.Register(MetricBatchWrite, m.batch)
	for outcome, c := range m.by {
		_ = reg.Register(MetricReports+"[outcome:"+outcome+"]", c)
	}
}
