package app

import (
	"strings"
	"time"

	"github.com/rcrowley/go-metrics"
)

// Metric names registered by the app; labels are appended as name[key:value,...].
const (
	MetricWebhooksReceived   = "kalypso_webhooks_received_total"
	MetricWebhooksFailed     = "kalypso_webhooks_failed_total"
	MetricWebhooksRejected   = "kalypso_webhooks_rejected_total"
	MetricReconcileDuration  = "kalypso_reconcile_duration_seconds"
	MetricRateLimitRemaining = "kalypso_github_rate_limit_remaining"
	MetricGitHubRetries      = "kalypso_github_retries_total"
	MetricWebhooksEchoes     = "kalypso_webhooks_echoes_dropped_total"
)

// Label values of kalypso_reconcile_duration_seconds.
const (
	TriggerWebhook = "webhook"
	TriggerResync  = "resync"
	OutcomeSuccess = "success"
	OutcomeError   = "error"
	otherEvent     = "other"
)

// labeled formats a go-metrics name with labels, the convention go-githubapp uses
// ("github.rate.limit[installation:42]") and the Prometheus exporter understands.
func labeled(name string, kv ...string) string {
	if len(kv) == 0 {
		return name
	}
	parts := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, kv[i]+":"+kv[i+1])
	}
	return name + "[" + strings.Join(parts, ",") + "]"
}

// counter returns the registered counter name with labels.
func (s *Server) counter(name string, kv ...string) metrics.Counter {
	return metrics.GetOrRegisterCounter(labeled(name, kv...), s.registry)
}

// observeReconcile records one webhook processing or resync run.
func (s *Server) observeReconcile(trigger string, elapsed time.Duration, err error) {
	outcome := OutcomeSuccess
	if err != nil {
		outcome = OutcomeError
	}
	name := labeled(MetricReconcileDuration, "trigger", trigger, "outcome", outcome)
	metrics.GetOrRegisterTimer(name, s.registry).Update(elapsed)
}

// handledEvents lists the event types the router routes.
func handledEvents(r Router) map[string]bool {
	events := map[string]bool{"ping": true}
	if r != nil {
		for _, e := range r.Events() {
			events[e] = true
		}
	}
	return events
}

// eventLabel bounds the label taken from the unauthenticated X-GitHub-Event
// header to the handled event types.
func (s *Server) eventLabel(event string) string {
	if s.events[event] {
		return event
	}
	return otherEvent
}
