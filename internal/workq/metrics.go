package workq

import (
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rcrowley/go-metrics"
	"k8s.io/client-go/util/workqueue"
)

// Metric names of the queue, labelled by queue (and kind where said); Prometheus names in base
// units. The first seven are client-go's own queue metrics.
const (
	MetricDepth          = "kalypso_queue_depth"                   // keys ready to run
	MetricAdds           = "kalypso_queue_adds_total"              // keys that became ready
	MetricWait           = "kalypso_queue_wait_seconds"            // time a ready key waited for a worker
	MetricWork           = "kalypso_queue_work_seconds"            // time a run took
	MetricUnfinished     = "kalypso_queue_unfinished_work_seconds" // time the runs in progress have taken so far
	MetricLongestRunning = "kalypso_queue_longest_running_seconds" // the longest run in progress so far
	MetricRequeues       = "kalypso_queue_requeues_total"          // delayed adds (retries and polls)
	MetricKeys           = "kalypso_queue_keys"                    // distinct keys waiting, delayed ones included
	MetricCoalesced      = "kalypso_queue_coalesced_total"         // adds merged into a key already waiting
	MetricRetries        = "kalypso_queue_retries_total"           // failed runs tried again, by kind
	MetricFailures       = "kalypso_queue_failures_total"          // runs failed for good, by kind
	MetricKeyLatency     = "kalypso_queue_key_latency_seconds"     // from a key's first add to the end of its run, by kind
	MetricRefused        = "kalypso_queue_refused_total"           // adds of new keys refused because queueSize keys wait
)

// labeled formats a go-metrics name with labels ("name[k:v,k2:v2]"), which the app's
// Prometheus exporter turns into labels.
func labeled(name string, kv ...string) string {
	parts := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, kv[i]+":"+kv[i+1])
	}
	return name + "[" + strings.Join(parts, ",") + "]"
}

// provider implements client-go's MetricsProvider over a go-metrics registry.
type provider struct{ reg metrics.Registry }

var _ workqueue.MetricsProvider = provider{}

func (p provider) counter(name, queue string) counter {
	return counter{metrics.GetOrRegisterCounter(labeled(name, "queue", queue), p.reg)}
}

func (p provider) timer(name, queue string) timer {
	return timer{metrics.GetOrRegisterTimer(labeled(name, "queue", queue), p.reg)}
}

func (p provider) gauge(name, queue string) *floatGauge {
	g := &floatGauge{}
	return p.reg.GetOrRegister(labeled(name, "queue", queue), func() metrics.GaugeFloat64 { return g }).(*floatGauge)
}

// NewDepthMetric implements workqueue.MetricsProvider.
func (p provider) NewDepthMetric(queue string) workqueue.GaugeMetric {
	g := &intGauge{}
	return p.reg.GetOrRegister(labeled(MetricDepth, "queue", queue), func() metrics.Gauge { return g }).(*intGauge)
}

// NewAddsMetric implements workqueue.MetricsProvider.
func (p provider) NewAddsMetric(queue string) workqueue.CounterMetric {
	return p.counter(MetricAdds, queue)
}

// NewLatencyMetric implements workqueue.MetricsProvider.
func (p provider) NewLatencyMetric(queue string) workqueue.HistogramMetric {
	return p.timer(MetricWait, queue)
}

// NewWorkDurationMetric implements workqueue.MetricsProvider.
func (p provider) NewWorkDurationMetric(queue string) workqueue.HistogramMetric {
	return p.timer(MetricWork, queue)
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider.
func (p provider) NewUnfinishedWorkSecondsMetric(queue string) workqueue.SettableGaugeMetric {
	return p.gauge(MetricUnfinished, queue)
}

// NewLongestRunningProcessorSecondsMetric implements workqueue.MetricsProvider.
func (p provider) NewLongestRunningProcessorSecondsMetric(queue string) workqueue.SettableGaugeMetric {
	return p.gauge(MetricLongestRunning, queue)
}

// NewRetriesMetric implements workqueue.MetricsProvider.
func (p provider) NewRetriesMetric(queue string) workqueue.CounterMetric {
	return p.counter(MetricRequeues, queue)
}

// counter adapts a go-metrics counter.
type counter struct{ metrics.Counter }

// Inc implements workqueue.CounterMetric.
func (c counter) Inc() { c.Counter.Inc(1) }

// timer adapts a go-metrics timer to observations in seconds.
type timer struct{ metrics.Timer }

// Observe implements workqueue.HistogramMetric.
func (t timer) Observe(seconds float64) { t.Update(time.Duration(seconds * float64(time.Second))) }

// intGauge is a go-metrics gauge that goes up and down.
type intGauge struct{ v atomic.Int64 }

// Inc implements workqueue.GaugeMetric.
func (g *intGauge) Inc() { g.v.Add(1) }

// Dec implements workqueue.GaugeMetric.
func (g *intGauge) Dec() { g.v.Add(-1) }

// Snapshot implements metrics.Gauge.
func (g *intGauge) Snapshot() metrics.Gauge { return metrics.GaugeSnapshot(g.v.Load()) }

// Update implements metrics.Gauge.
func (g *intGauge) Update(v int64) { g.v.Store(v) }

// Value implements metrics.Gauge.
func (g *intGauge) Value() int64 { return g.v.Load() }

// floatGauge is a settable go-metrics float gauge.
type floatGauge struct{ bits atomic.Uint64 }

// Set implements workqueue.SettableGaugeMetric.
func (g *floatGauge) Set(v float64) { g.Update(v) }

// Snapshot implements metrics.GaugeFloat64.
func (g *floatGauge) Snapshot() metrics.GaugeFloat64 { return metrics.GaugeFloat64Snapshot(g.Value()) }

// Update implements metrics.GaugeFloat64.
func (g *floatGauge) Update(v float64) { g.bits.Store(math.Float64bits(v)) }

// Value implements metrics.GaugeFloat64.
func (g *floatGauge) Value() float64 { return math.Float64frombits(g.bits.Load()) }
