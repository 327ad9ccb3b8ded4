package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Hold stops automatic promotion into and out of an environment until it is released.
type Hold struct {
	ControlPlane string    `json:"controlPlane"`
	Environment  string    `json:"environment"`
	By           string    `json:"by"`
	Commit       string    `json:"commit"` // the main commit pinned when the hold was set
	Reason       string    `json:"reason"`
	Since        time.Time `json:"since"`
}

// SetHold holds an environment; an environment held already keeps its first hold (false).
func (s *Store) SetHold(ctx context.Context, h Hold) (bool, error) {
	res, err := s.exec(ctx, s.db, `INSERT INTO holds (control_plane, environment, held_by, main_commit, reason, since) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (control_plane, environment) DO NOTHING`, h.ControlPlane, h.Environment, h.By, h.Commit, h.Reason, ms(s.now()))
	if err != nil {
		return false, fmt.Errorf("store: hold %s/%s: %w", h.ControlPlane, h.Environment, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ReleaseHold removes an environment's hold and returns it (false when it was not held).
func (s *Store) ReleaseHold(ctx context.Context, cp, env string) (Hold, bool, error) {
	var h Hold
	var found bool
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if h, found, err = s.holdOf(ctx, tx, cp, env); err != nil || !found {
			return err
		}
		_, err = s.exec(ctx, tx, `DELETE FROM holds WHERE control_plane = ? AND environment = ?`, cp, env)
		return err
	})
	if err != nil {
		return Hold{}, false, fmt.Errorf("store: release %s/%s: %w", cp, env, err)
	}
	return h, found, nil
}

// HoldOf returns an environment's hold, if it is held.
func (s *Store) HoldOf(ctx context.Context, cp, env string) (Hold, bool, error) {
	h, found, err := s.holdOf(ctx, s.db, cp, env)
	if err != nil {
		return Hold{}, false, fmt.Errorf("store: hold of %s/%s: %w", cp, env, err)
	}
	return h, found, nil
}

func (s *Store) holdOf(ctx context.Context, q querier, cp, env string) (Hold, bool, error) {
	h := Hold{ControlPlane: cp, Environment: env}
	var since int64
	err := s.queryRow(ctx, q, `SELECT held_by, main_commit, reason, since FROM holds WHERE control_plane = ? AND environment = ?`, cp, env).
		Scan(&h.By, &h.Commit, &h.Reason, &since)
	if errors.Is(err, sql.ErrNoRows) {
		return Hold{}, false, nil
	}
	h.Since = fromMS(since)
	return h, err == nil, err
}

// Holds lists the holds of a control plane's environments, by environment.
func (s *Store) Holds(ctx context.Context, cp string) ([]Hold, error) {
	rows, err := s.query(ctx, s.db, `SELECT environment, held_by, main_commit, reason, since FROM holds WHERE control_plane = ? ORDER BY environment`, cp)
	if err != nil {
		return nil, fmt.Errorf("store: holds of %s: %w", cp, err)
	}
	var out []Hold
	err = eachRow(rows, func() error {
		h := Hold{ControlPlane: cp}
		var since int64
		err := rows.Scan(&h.Environment, &h.By, &h.Commit, &h.Reason, &since)
		h.Since = fromMS(since)
		out = append(out, h)
		return err
	})
	return out, err
}
