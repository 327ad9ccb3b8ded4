package app

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/config"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// oneKey routes every delivery to the same key, or reports it as an echo.
type oneKey struct {
	queue *Queue
	echo  func(payload []byte) bool
}

func (r *oneKey) Events() []string { return []string{"push"} }

func (r *oneKey) Route(ctx context.Context, _ string, payload []byte) (bool, error) {
	if r.echo != nil && r.echo(payload) {
		return true, nil
	}
	return false, r.queue.Add(ctx, workq.Key{Kind: "environment", Inst: 42, Repo: "octo/control-plane", Name: "dev"}, nil)
}

// A delivery whose work coalesces into a key already waiting is never refused, however many
// arrive while the key runs: 500 deliveries with room for one waiting key are all accepted,
// cost two runs, and each is logged as processed once the run that did its work ended.
func TestDeliveriesCoalesceIntoAWaitingKeyAndAreNeverRefused(t *testing.T) {
	gh := newFakeGitHub(t)
	cfg := testConfig(t, gh.URL)
	cfg.Workers, cfg.QueueSize = 1, 1
	release := make(chan struct{})
	var runs atomic.Int32
	router := &oneKey{}
	run := func(context.Context, workq.Key, workq.Need) error {
		if runs.Add(1) == 1 {
			<-release
		}
		return nil
	}
	s, logs := newTestServer(t, cfg, WithWork(router, run))
	router.queue = s.Queue()
	r := start(t, s)
	sig := sign(testSecret, pushPayload)
	require.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sig))
	eventually(t, func() bool { return runs.Load() == 1 }, "the first run began")
	for i := range 499 {
		require.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sig), "delivery %d", i+2)
	}
	close(release)
	eventually(t, func() bool { return strings.Count(logs.String(), `"webhook processed"`) == 500 }, "every delivery processed")
	require.NoError(t, r.stop(t))
	assert.Equal(t, int32(2), runs.Load(), "the key ran once more for the 499 that arrived while it ran")
	assert.Zero(t, s.counter(MetricWebhooksRejected, "reason", RejectQueueFull).Count())
	metrics := httptestGet(t, s.ManagementHandler(), "/metrics")
	for _, want := range []string{
		`kalypso_queue_coalesced_total{queue="work",kind="environment"} 498`,
		`kalypso_queue_adds_total{queue="work"} 2`,
		`kalypso_queue_keys{queue="work"} 0`,
		`# TYPE kalypso_queue_key_latency_seconds summary`,
		`# TYPE kalypso_queue_depth gauge`,
	} {
		assert.Contains(t, metrics, want)
	}
}

// The app's own echoes are answered 200, counted and take no slot.
func TestEchoesAreDroppedAndCounted(t *testing.T) {
	gh := newFakeGitHub(t)
	var runs atomic.Int32
	router := &oneKey{echo: func(p []byte) bool { return strings.Contains(string(p), "kalypso[bot]") }}
	s, logs := newTestServer(t, testConfig(t, gh.URL), WithWork(router, func(context.Context, workq.Key, workq.Need) error {
		runs.Add(1)
		return nil
	}))
	router.queue = s.Queue()
	r := start(t, s)
	echo := `{"ref":"refs/heads/kalypso/dev","installation":{"id":42},"sender":{"login":"kalypso[bot]"}}`
	for range 3 {
		require.Equal(t, http.StatusOK, deliver(t, r.url, "push", echo, sign(testSecret, echo)))
	}
	require.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sign(testSecret, pushPayload)))
	eventually(t, func() bool { return strings.Count(logs.String(), `"webhook processed"`) == 4 }, "processed")
	require.NoError(t, r.stop(t))
	assert.Equal(t, int32(1), runs.Load(), "echoes do no work")
	assert.Equal(t, int64(3), s.counter(MetricWebhooksEchoes, "event", "push").Count())
	assert.Contains(t, httptestGet(t, s.ManagementHandler(), "/metrics"), `kalypso_webhooks_echoes_dropped_total{event="push"} 3`)
}

// A failed run is retried with backoff; the delivery is processed when a try succeeds.
func TestFailedWorkIsRetried(t *testing.T) {
	gh := newFakeGitHub(t)
	cfg := testConfig(t, gh.URL)
	cfg.Queue.MaxAttempts = 3
	cfg.Queue.RetryDelay, cfg.Queue.MaxRetryDelay = config.Duration(5*time.Millisecond), config.Duration(5*time.Millisecond)
	var runs atomic.Int32
	router := &oneKey{}
	s, logs := newTestServer(t, cfg, WithWork(router, func(context.Context, workq.Key, workq.Need) error {
		if runs.Add(1) < 3 {
			return assert.AnError
		}
		return nil
	}))
	router.queue = s.Queue()
	r := start(t, s)
	require.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sign(testSecret, pushPayload)))
	eventually(t, func() bool { return strings.Contains(logs.String(), `"webhook processed"`) }, "processed after the retries")
	require.NoError(t, r.stop(t))
	assert.Equal(t, int32(3), runs.Load())
	assert.Equal(t, 2, strings.Count(logs.String(), "work failed; retrying"))
	assert.NotContains(t, logs.String(), "webhook processing failed")
}
