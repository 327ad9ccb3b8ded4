package store

import (
	"context"
	"fmt"
	"time"
)

// TryAcquire takes the lease key for holder until ttl from now, when it is free, expired or
// already held by holder (which renews it). It reports whether holder holds it now.
func (s *Store) TryAcquire(ctx context.Context, key, holder string, ttl time.Duration) (bool, error) {
	now := s.now()
	res, err := s.exec(ctx, s.db, `INSERT INTO leases (key, holder, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE leases.holder = excluded.holder OR leases.expires_at <= ?`, key, holder, ms(now.Add(ttl)), ms(now))
	if err != nil {
		return false, fmt.Errorf("store: acquire lease %s: %w", key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: acquire lease %s: %w", key, err)
	}
	return n == 1, nil
}

// Release gives the lease key up if holder holds it; releasing a lease held by another
// holder, or by no one, changes nothing.
func (s *Store) Release(ctx context.Context, key, holder string) error {
	if _, err := s.exec(ctx, s.db, `DELETE FROM leases WHERE key = ? AND holder = ?`, key, holder); err != nil {
		return fmt.Errorf("store: release lease %s: %w", key, err)
	}
	return nil
}

// ReleaseAll gives up every lease holder holds: a replica that stops hands its periodic work
// to the others at once, rather than when its leases expire.
func (s *Store) ReleaseAll(ctx context.Context, holder string) error {
	if _, err := s.exec(ctx, s.db, `DELETE FROM leases WHERE holder = ?`, holder); err != nil {
		return fmt.Errorf("store: release the leases of %s: %w", holder, err)
	}
	return nil
}
