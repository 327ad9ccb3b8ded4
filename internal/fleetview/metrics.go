package fleetview

import (
	"math"
	"sync"
	"time"

	"github.com/rcrowley/go-metrics"
)

// Metric names of the fleet view; labels are appended as name[key:value,...].
const (
	MetricPromotionState    = "kalypso_fleet_promotion_state"
	MetricClustersCompliant = "kalypso_fleet_clusters_compliant"
	MetricClustersExpected  = "kalypso_fleet_clusters_expected"
	MetricDeployedAge       = "kalypso_fleet_deployed_commit_age_seconds"
	MetricLeadTime          = "kalypso_fleet_lead_time_seconds"
)

// StateCode is the value of kalypso_fleet_promotion_state for a state.
func StateCode(state string) float64 {
	switch state {
	case StateAwaitingMerge:
		return 1
	case StateWaiting:
		return 2
	case StateDeployed:
		return 3
	case StateFailed:
		return 4
	case StateSuperseded:
		return 5
	case StateAwaitingApproval:
		return 6
	}
	return 0
}

// Metrics keeps the fleet gauges and the lead-time histogram in a go-metrics registry.
type Metrics struct {
	reg      metrics.Registry
	leadTime *Histogram
	now      func() time.Time

	mu       sync.Mutex
	gauges   map[string]bool // names set by the last update, to drop environments that went away
	observed map[int64]bool  // deployments whose lead time is counted
}

// NewMetrics registers the lead-time histogram in reg.
func NewMetrics(reg metrics.Registry, now func() time.Time) *Metrics {
	h := NewHistogram(LeadTimeBuckets())
	_ = reg.Register(MetricLeadTime, h)
	return &Metrics{reg: reg, leadTime: h, now: now, gauges: map[string]bool{}, observed: map[int64]bool{}}
}

// LeadTimeBuckets are the upper bounds, in seconds, of the lead-time histogram: 1 min to 1 week.
func LeadTimeBuckets() []float64 {
	return []float64{60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400, 259200, 604800}
}

// update sets the gauges from a snapshot and counts newly finished promotions.
func (m *Metrics) update(f *Fleet) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	set := func(name string, v float64, kv ...string) {
		full := labeled(name, kv...)
		seen[full] = true
		metrics.GetOrRegisterGaugeFloat64(full, m.reg).Update(v)
	}
	for _, cp := range f.ControlPlanes {
		for _, e := range cp.Environments {
			kv := []string{"control_plane", cp.Repo, "environment", e.Name}
			set(MetricPromotionState, StateCode(e.Promotion.State), kv...)
			set(MetricClustersCompliant, float64(e.Promotion.Compliant), kv...)
			set(MetricClustersExpected, float64(e.Promotion.Expected), kv...)
			if d := e.Promotion.Deployed; d != nil && d.Time != nil {
				set(MetricDeployedAge, math.Max(0, m.now().Sub(*d.Time).Seconds()), kv...)
			}
			m.observe(e.History)
		}
	}
	for name := range m.gauges {
		if !seen[name] {
			m.reg.Unregister(name)
		}
	}
	m.gauges = seen
}

// observe counts the lead time of each successful promotion once.
func (m *Metrics) observe(history []Deployment) {
	for _, d := range history {
		if d.State != "success" || d.LeadTime == nil || m.observed[d.ID] {
			continue
		}
		if len(m.observed) > 100000 {
			m.observed = map[int64]bool{}
		}
		m.observed[d.ID] = true
		m.leadTime.Observe(float64(*d.LeadTime))
	}
}

// labeled formats name[k:v,...], the convention the app's Prometheus exporter reads.
func labeled(name string, kv ...string) string {
	out := name + "["
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			out += ","
		}
		out += kv[i] + ":" + kv[i+1]
	}
	return out + "]"
}

// Histogram is a Prometheus histogram with fixed buckets (the app's exporter writes it as one).
// It embeds a no-op go-metrics histogram only so that a go-metrics registry accepts it.
type Histogram struct {
	metrics.NilHistogram
	mu     sync.Mutex
	bounds []float64
	counts []uint64
	sum    float64
	count  uint64
}

// NewHistogram returns an empty histogram with the given upper bounds, ascending.
func NewHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]uint64, len(bounds))}
}

// Observe adds one value.
func (h *Histogram) Observe(v float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, b := range h.bounds {
		if v <= b {
			h.counts[i]++
		}
	}
	h.sum += v
	h.count++
}

// Buckets returns the upper bounds and the cumulative count of each, the sum and the count.
func (h *Histogram) Buckets() (bounds []float64, cumulative []uint64, sum float64, count uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]float64(nil), h.bounds...), append([]uint64(nil), h.counts...), h.sum, h.count
}
