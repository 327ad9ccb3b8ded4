package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

func TestHolds(t *testing.T) {
	suite(t, func(t *testing.T, c *clock, reopen func() *store.Store) {
		ctx := context.Background()
		s := reopen()
		set, err := s.SetHold(ctx, store.Hold{ControlPlane: "o/cp", Environment: "prod", By: "alice", Commit: "abc", Reason: "bad release"})
		require.NoError(t, err)
		require.True(t, set)
		c.add(time.Minute)
		set, err = s.SetHold(ctx, store.Hold{ControlPlane: "o/cp", Environment: "prod", By: "bob", Reason: "again"})
		require.NoError(t, err)
		require.False(t, set, "the first hold stays")

		other := reopen() // another replica, or a restart
		h, held, err := other.HoldOf(ctx, "o/cp", "prod")
		require.NoError(t, err)
		require.True(t, held)
		require.Equal(t, "alice", h.By)
		require.Equal(t, "bad release", h.Reason)
		require.Equal(t, "abc", h.Commit)
		require.Equal(t, time.Date(2026, 8, 24, 9, 0, 0, 0, time.UTC), h.Since)
		list, err := other.Holds(ctx, "o/cp")
		require.NoError(t, err)
		require.Len(t, list, 1)
		_, held, err = other.HoldOf(ctx, "o/cp", "dev")
		require.NoError(t, err)
		require.False(t, held)

		h, released, err := s.ReleaseHold(ctx, "o/cp", "prod")
		require.NoError(t, err)
		require.True(t, released)
		require.Equal(t, "alice", h.By)
		_, released, err = s.ReleaseHold(ctx, "o/cp", "prod")
		require.NoError(t, err)
		require.False(t, released)
		_, held, err = other.HoldOf(ctx, "o/cp", "prod")
		require.NoError(t, err)
		require.False(t, held)
	})
}
