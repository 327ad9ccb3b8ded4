package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Kinds of inventory events.
const (
	ClusterRegistered = "registered" // first report
	ClusterRetired    = "retired"    // silent for longer than reports.retireAfter
	ClusterReturned   = "returned"   // reported again after its retirement
)

// Cluster is an entry of the inventory.
type Cluster struct {
	ControlPlane string
	Environment  string
	Name         string
	ClusterType  string
	FirstSeen    time.Time
	LastSeen     time.Time
	RetiredAt    *time.Time // nil while registered
}

// ClusterEvent records a change of the inventory.
type ClusterEvent struct {
	ControlPlane, Environment, Cluster string
	At                                 time.Time
	Kind                               string
	Detail                             string
}

// recordEvent appends an inventory event.
func (s *Store) recordEvent(ctx context.Context, q querier, cp, env, cluster string, at int64, kind, detail string) error {
	_, err := s.exec(ctx, q, `INSERT INTO cluster_events (control_plane, environment, cluster, at, kind, detail) VALUES (?, ?, ?, ?, ?, ?)`,
		cp, env, cluster, at, kind, detail)
	if err != nil {
		return fmt.Errorf("record %s of cluster %s: %w", kind, cluster, err)
	}
	return nil
}

// RetireSilent retires every registered cluster last seen before cutoff, records each
// retirement and returns the retired clusters. Their state and history are kept.
func (s *Store) RetireSilent(ctx context.Context, cutoff time.Time, why string) ([]Cluster, error) {
	var out []Cluster
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = nil
		rows, err := s.query(ctx, tx, `SELECT control_plane, environment, name, cluster_type, first_seen, last_seen FROM clusters
			WHERE retired_at IS NULL AND last_seen < ? ORDER BY control_plane, environment, name`+s.dialect.forUpdate(), ms(cutoff))
		if err != nil {
			return err
		}
		err = eachRow(rows, func() error {
			var c Cluster
			var first, last int64
			err := rows.Scan(&c.ControlPlane, &c.Environment, &c.Name, &c.ClusterType, &first, &last)
			c.FirstSeen, c.LastSeen = fromMS(first), fromMS(last)
			out = append(out, c)
			return err
		})
		if err != nil {
			return err
		}
		now := s.now()
		var changed []envKey
		for i := range out {
			c := &out[i]
			c.RetiredAt = &now
			if _, err := s.exec(ctx, tx, `UPDATE clusters SET retired_at = ? WHERE control_plane = ? AND environment = ? AND name = ?`,
				ms(now), c.ControlPlane, c.Environment, c.Name); err != nil {
				return err
			}
			if _, err := s.exec(ctx, tx, `UPDATE environment_counts SET clusters = clusters - 1 WHERE control_plane = ? AND environment = ?`,
				c.ControlPlane, c.Environment); err != nil {
				return err
			}
			detail := fmt.Sprintf("last report %s, %s", c.LastSeen.Format(time.RFC3339), why)
			if err := s.recordEvent(ctx, tx, c.ControlPlane, c.Environment, c.Name, ms(now), ClusterRetired, detail); err != nil {
				return err
			}
			if k := (envKey{c.ControlPlane, c.Environment}); len(changed) == 0 || changed[len(changed)-1] != k {
				changed = append(changed, k) // sorted by environment: each once
			}
		}
		return s.notifyChanged(ctx, tx, changed)
	})
	if err != nil {
		return nil, fmt.Errorf("store: retire silent clusters: %w", err)
	}
	return out, nil
}

// Inventory lists the registered clusters of an environment (retired ones too when
// withRetired), by name.
func (s *Store) Inventory(ctx context.Context, cp, env string, withRetired bool) ([]Cluster, error) {
	q := `SELECT name, cluster_type, first_seen, last_seen, retired_at FROM clusters WHERE control_plane = ? AND environment = ?`
	if !withRetired {
		q += ` AND retired_at IS NULL`
	}
	rows, err := s.query(ctx, s.db, q+` ORDER BY name`, cp, env)
	if err != nil {
		return nil, fmt.Errorf("store: inventory of %s/%s: %w", cp, env, err)
	}
	var out []Cluster
	err = eachRow(rows, func() error {
		c := Cluster{ControlPlane: cp, Environment: env}
		var first, last int64
		var retired sql.NullInt64
		err := rows.Scan(&c.Name, &c.ClusterType, &first, &last, &retired)
		c.FirstSeen, c.LastSeen = fromMS(first), fromMS(last)
		if retired.Valid {
			t := fromMS(retired.Int64)
			c.RetiredAt = &t
		}
		out = append(out, c)
		return err
	})
	return out, err
}

// ClusterCount returns the registered clusters of an environment.
func (s *Store) ClusterCount(ctx context.Context, cp, env string) (int, error) {
	var n sql.NullInt64
	err := s.queryRow(ctx, s.db, `SELECT clusters FROM environment_counts WHERE control_plane = ? AND environment = ?`, cp, env).Scan(&n)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: cluster count of %s/%s: %w", cp, env, err)
	}
	return int(n.Int64), nil
}

// Events lists the newest inventory events of an environment, newest first, at most limit.
func (s *Store) Events(ctx context.Context, cp, env string, limit int) ([]ClusterEvent, error) {
	rows, err := s.query(ctx, s.db, `SELECT cluster, at, kind, detail FROM cluster_events WHERE control_plane = ? AND environment = ?
		ORDER BY at DESC, id DESC LIMIT ?`, cp, env, limit)
	if err != nil {
		return nil, fmt.Errorf("store: inventory events of %s/%s: %w", cp, env, err)
	}
	var out []ClusterEvent
	err = eachRow(rows, func() error {
		e := ClusterEvent{ControlPlane: cp, Environment: env}
		var at int64
		err := rows.Scan(&e.Cluster, &at, &e.Kind, &e.Detail)
		e.At = fromMS(at)
		out = append(out, e)
		return err
	})
	return out, err
}
