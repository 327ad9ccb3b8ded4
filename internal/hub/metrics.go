package hub

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/rcrowley/go-metrics"
)

// Metric names of the hub; labels are appended as name[key:value,...].
const (
	MetricReports        = "kalypso_hub_reports_total"
	MetricBatchWrite     = "kalypso_hub_batch_write_seconds"
	MetricClusters       = "kalypso_hub_clusters"
	MetricClustersBehind = "kalypso_hub_clusters_behind"
	MetricDriftSeconds   = "kalypso_hub_drift_seconds"
	MetricDeployments    = "kalypso_hub_deployments_per_day"
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

// gaugePeriod is how often the per-environment gauges are recomputed from the store.
const gaugePeriod = 30 * time.Second

// doraDays is the window of the DORA gauges.
const doraDays = 30

// labeled appends Prometheus labels to a metric name as the app's exporter reads them.
func labeled(name string, kv ...string) string {
	var b strings.Builder
	b.WriteString(name + "[")
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i] + ":" + kv[i+1])
	}
	b.WriteByte(']')
	return b.String()
}

// UpdateGauges sets the per-environment gauges: clusters by state, the longest drift and
// the DORA keys of the last 30 days.
func (h *Hub) UpdateGauges(ctx context.Context) error {
	all, err := h.opts.Directory.All(ctx)
	if err != nil {
		return err
	}
	for _, t := range all {
		s, err := h.summary(ctx, t)
		if err != nil {
			return err
		}
		kv := []string{"control_plane", t.ControlPlane, "environment", t.Environment}
		set := func(name string, v float64, extra ...string) {
			metrics.GetOrRegisterGaugeFloat64(labeled(name, append(append([]string{}, kv...), extra...)...), h.metrics.registry()).Update(v)
		}
		for state, n := range map[string]int{"registered": s.Registered, "compliant": s.Compliant, "failed": s.Failed} {
			set(MetricClusters, float64(n), "state", state)
		}
		set(MetricClustersBehind, float64(s.Behind))
		if d, err := h.Drift(ctx, t.ControlPlane, t.Environment); err == nil && len(d.Behind) > 0 {
			set(MetricDriftSeconds, float64(d.Behind[0].BehindSeconds))
		} else {
			set(MetricDriftSeconds, 0)
		}
		k, err := h.DORA(ctx, t.ControlPlane, t.Environment, doraDays)
		if err != nil {
			return err
		}
		set(MetricDeployments, k.DeploymentsPerDay)
		for name, v := range map[string]*float64{MetricLeadTime: k.LeadTimeSeconds, MetricChangeFailure: k.ChangeFailureRate, MetricTimeToRestore: k.TimeToRestoreSeconds} {
			if v != nil {
				set(name, *v)
			}
		}
	}
	return nil
}

// registry is the registry the gauges go to.
func (m *hubMetrics) registry() metrics.Registry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reg
}

// gauges recomputes the gauges every gaugePeriod until ctx ends.
func (h *Hub) gauges(ctx context.Context) {
	t := time.NewTicker(gaugePeriod)
	defer t.Stop()
	for {
		if err := h.UpdateGauges(ctx); err != nil && ctx.Err() == nil {
			h.opts.Logger.Debug().Err(err).Msg("hub gauges")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
