package hub

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAnswerCacheServesRecentAggregates(t *testing.T) {
	now := time.Date(2026, 8, 24, 9, 0, 0, 0, time.UTC)
	c := newAnswerCache(func() time.Time { return now })
	calls := 0
	get := func() int {
		v, err := cachedOf(c, "org/cp/dev", "counts", func() (int, error) { calls++; return calls, nil })
		require.NoError(t, err)
		return v
	}
	require.Equal(t, 1, get())
	now = now.Add(5 * time.Second)
	require.Equal(t, 1, get(), "served from the cache within answerTTL")
	c.wrote("org/cp/dev")
	require.Equal(t, 2, get(), "a write makes an aggregate older than freshAfterWrite stale")
	now = now.Add(500 * time.Millisecond)
	c.wrote("org/cp/dev")
	require.Equal(t, 2, get(), "a computation younger than freshAfterWrite is kept, whatever is written")
	now = now.Add(answerTTL)
	require.Equal(t, 3, get(), "answerTTL passed")
	_, err := cachedOf(c, "org/cp/dev", "broken", func() (int, error) { return 0, errors.New("boom") })
	require.Error(t, err)
	v, err := cachedOf(c, "org/cp/dev", "broken", func() (int, error) { return 7, nil })
	require.NoError(t, err)
	require.Equal(t, 7, v, "errors are not cached")
}
