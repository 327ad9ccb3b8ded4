package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeliveryLRU(t *testing.T) {
	l := deliveryLRU{max: 3}
	require.True(t, l.firstTime("a"))
	require.False(t, l.firstTime("a"), "the same delivery again")
	require.True(t, l.firstTime(""), "no delivery ID: never a duplicate")
	require.True(t, l.firstTime(""))
	require.True(t, l.firstTime("b"))
	require.True(t, l.firstTime("c"))
	require.False(t, l.firstTime("a"), "seen again: now the most recent")
	require.True(t, l.firstTime("d"), "the least recent (b) is evicted")
	require.True(t, l.firstTime("b"), "b was evicted")
	require.False(t, l.firstTime("a"))
	require.Equal(t, 3, l.order.Len(), "bounded")

	l.forget("a")
	require.True(t, l.firstTime("a"), "a forgotten delivery is processed again")
	l.forget("never-seen")
}

func TestDeliveryLRUZeroValueIsBounded(t *testing.T) {
	var l deliveryLRU
	for i := range recentDeliveries + 10 {
		require.True(t, l.firstTime(fmt.Sprint(i)))
	}
	require.Equal(t, recentDeliveries, l.order.Len())
	require.True(t, l.firstTime("0"), "the oldest were evicted")
	require.False(t, l.firstTime(fmt.Sprint(recentDeliveries+9)))
}

// A redelivery (same X-GitHub-Delivery) is answered 200 and not processed again, unless the
// first processing failed; a new delivery of the same bytes is processed.
func TestRedeliveriesAreProcessedOnce(t *testing.T) {
	gh := newFakeGitHub(t)
	var mu sync.Mutex
	calls := map[string]int{}
	fail := map[string]bool{"d-fails": true}
	h := handlerFunc{events: []string{"push"}, fn: func(_ context.Context, _, id string, _ []byte) error {
		mu.Lock()
		defer mu.Unlock()
		calls[id]++
		if fail[id] {
			fail[id] = false
			return errors.New("GitHub is down")
		}
		return nil
	}}
	s, logs := newTestServer(t, testConfig(t, gh.URL), WithHandlers(h))
	r := start(t, s)
	sig := sign(testSecret, pushPayload)
	count := func(id string) int {
		mu.Lock()
		defer mu.Unlock()
		return calls[id]
	}

	require.Equal(t, http.StatusOK, deliverAs(t, r.url, "d-1", "push", pushPayload, sig))
	eventually(t, func() bool { return count("d-1") == 1 }, "first delivery processed")
	for range 5 {
		require.Equal(t, http.StatusOK, deliverAs(t, r.url, "d-1", "push", pushPayload, sig), "a redelivery is acknowledged")
	}
	require.Equal(t, http.StatusBadRequest, deliverAs(t, r.url, "d-2", "push", pushPayload, sign("wrong", pushPayload)))
	require.Equal(t, http.StatusOK, deliverAs(t, r.url, "d-2", "push", pushPayload, sig), "a forged request does not use up its delivery ID")
	require.Equal(t, http.StatusOK, deliverAs(t, r.url, "d-fails", "push", pushPayload, sig))
	eventually(t, func() bool { return count("d-2") == 1 && count("d-fails") == 1 }, "processed")
	eventually(t, func() bool { return !s.inflightBusy() }, "the failure is recorded")
	require.Equal(t, http.StatusOK, deliverAs(t, r.url, "d-fails", "push", pushPayload, sig))
	require.NoError(t, r.stop(t))

	assert.Equal(t, 1, count("d-1"), "redeliveries are skipped")
	assert.Equal(t, 2, count("d-fails"), "a failed delivery sent again is processed again")
	assert.Contains(t, logs.String(), msgDuplicateDelivery)
}

// inflightBusy reports whether any webhook event is queued or running.
func (s *Server) inflightBusy() bool {
	s.inflight.mu.Lock()
	defer s.inflight.mu.Unlock()
	return s.inflight.n > 0
}
