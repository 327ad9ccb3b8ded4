package store

import (
	"context"
	"fmt"
	"time"
)

// Pruned counts what Prune deleted.
type Pruned struct {
	Reports, Events, Replay, Leases int64
}

// pruneStep is one DELETE of Prune and where its count goes.
type pruneStep struct {
	n     *int64
	query string
	arg   int64
}

// Prune deletes the reports and inventory events received before now minus retention, and
// expired replay digests and leases. The inventory, each object's newest state, the
// deployments and the audit trail are kept. retention 0 keeps the history forever.
func (s *Store) Prune(ctx context.Context, retention time.Duration) (Pruned, error) {
	now := s.now()
	var p Pruned
	steps := []pruneStep{
		{&p.Replay, `DELETE FROM replay WHERE expires_at < ?`, ms(now)},
		{&p.Leases, `DELETE FROM leases WHERE expires_at < ?`, ms(now)},
	}
	if retention > 0 {
		cutoff := ms(now.Add(-retention))
		steps = append(steps,
			pruneStep{&p.Reports, `DELETE FROM reports WHERE received_at < ?`, cutoff},
			pruneStep{&p.Events, `DELETE FROM cluster_events WHERE at < ?`, cutoff})
	}
	for _, st := range steps {
		res, err := s.exec(ctx, s.db, st.query, st.arg)
		if err != nil {
			return p, fmt.Errorf("store: prune: %w", err)
		}
		*st.n, _ = res.RowsAffected()
	}
	return p, nil
}
