package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Source is a source commit a GitOps commit was rendered from (main, the environment branch,
// a workload), read from its Kalypso-Source trailers.
type Source struct {
	Name   string `json:"name"`
	Commit string `json:"commit"`
}

// CommitInfo is what a GitOps commit deploys.
type CommitInfo struct {
	ControlPlane, Environment string
	SHA                       string
	MainCommit                string   // the promoted main commit ("" when unknown)
	Sources                   []Source // the source commits
	CommittedAt               time.Time
}

// SaveCommit records what a GitOps commit deploys (idempotent).
func (s *Store) SaveCommit(ctx context.Context, c CommitInfo) error {
	src, err := json.Marshal(c.Sources)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, s.db, `INSERT INTO gitops_commits (control_plane, environment, sha, main_commit, sources, committed_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (control_plane, environment, sha) DO UPDATE SET main_commit = excluded.main_commit,
		sources = excluded.sources, committed_at = excluded.committed_at`,
		c.ControlPlane, c.Environment, c.SHA, c.MainCommit, string(src), ms(c.CommittedAt))
	if err != nil {
		return fmt.Errorf("store: save commit %s: %w", c.SHA, err)
	}
	return nil
}

// Commits returns what the store knows of an environment's GitOps commits, by SHA.
func (s *Store) Commits(ctx context.Context, cp, env string) (map[string]CommitInfo, error) {
	rows, err := s.query(ctx, s.db, `SELECT sha, main_commit, sources, committed_at FROM gitops_commits
		WHERE control_plane = ? AND environment = ?`, cp, env)
	if err != nil {
		return nil, fmt.Errorf("store: commits of %s/%s: %w", cp, env, err)
	}
	out := map[string]CommitInfo{}
	err = eachRow(rows, func() error {
		c := CommitInfo{ControlPlane: cp, Environment: env}
		var src string
		var at int64
		if err := rows.Scan(&c.SHA, &c.MainCommit, &src, &at); err != nil {
			return err
		}
		c.CommittedAt = fromMS(at)
		if err := json.Unmarshal([]byte(src), &c.Sources); err != nil {
			return fmt.Errorf("sources of %s: %w", c.SHA, err)
		}
		out[c.SHA] = c
		return nil
	})
	return out, err
}

// Deployment is one promotion of a main commit into an environment.
type Deployment struct {
	ID                        int64
	ControlPlane, Environment string
	MainCommit                string
	GitOpsCommit              string
	Sources                   []Source
	CommittedAt               time.Time  // when the main commit was made (for the lead time)
	StartedAt                 time.Time  // when the GitOps pull request was merged
	FinishedAt                *time.Time // nil while the clusters are awaited
	State                     string     // pending, success, failure, error (superseded)
	Description               string
}

// LeadTime is the time from the main commit to its deployment, once finished.
func (d Deployment) LeadTime() (time.Duration, bool) {
	if d.FinishedAt == nil || d.CommittedAt.IsZero() {
		return 0, false
	}
	return d.FinishedAt.Sub(d.CommittedAt), true
}

// StartDeployment records a deployment that began (idempotent: a restarted wait keeps the
// first record) and returns its ID.
func (s *Store) StartDeployment(ctx context.Context, d Deployment) (int64, error) {
	src, err := json.Marshal(d.Sources)
	if err != nil {
		return 0, err
	}
	var id int64
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `INSERT INTO deployments (control_plane, environment, main_commit, gitops_commit, sources,
			committed_at, started_at, state, description) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', '')
			ON CONFLICT (control_plane, environment, main_commit, gitops_commit) DO NOTHING`,
			d.ControlPlane, d.Environment, d.MainCommit, d.GitOpsCommit, string(src), ms(d.CommittedAt), ms(d.StartedAt)); err != nil {
			return err
		}
		return s.queryRow(ctx, tx, `SELECT id FROM deployments WHERE control_plane = ? AND environment = ? AND main_commit = ? AND gitops_commit = ?`,
			d.ControlPlane, d.Environment, d.MainCommit, d.GitOpsCommit).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("store: start deployment of %s to %s: %w", d.MainCommit, d.Environment, err)
	}
	return id, nil
}

// FinishDeployment records the verdict of a deployment.
func (s *Store) FinishDeployment(ctx context.Context, id int64, state, desc string, at time.Time) error {
	_, err := s.exec(ctx, s.db, `UPDATE deployments SET state = ?, description = ?, finished_at = ? WHERE id = ?`, state, desc, ms(at), id)
	if err != nil {
		return fmt.Errorf("store: finish deployment %d: %w", id, err)
	}
	return nil
}

// Deployments lists an environment's deployments started at or after since, newest first,
// at most limit; env "" lists every environment of the control plane.
func (s *Store) Deployments(ctx context.Context, cp, env string, since time.Time, limit int) ([]Deployment, error) {
	q := `SELECT id, environment, main_commit, gitops_commit, sources, committed_at, started_at, finished_at, state, description
		FROM deployments WHERE control_plane = ? AND started_at >= ?`
	args := []any{cp, ms(since)}
	if env != "" {
		q += ` AND environment = ?`
		args = append(args, env)
	}
	rows, err := s.query(ctx, s.db, q+` ORDER BY started_at DESC, id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: deployments of %s/%s: %w", cp, env, err)
	}
	var out []Deployment
	err = eachRow(rows, func() error {
		d := Deployment{ControlPlane: cp}
		var src string
		var committed, started int64
		var finished sql.NullInt64
		if err := rows.Scan(&d.ID, &d.Environment, &d.MainCommit, &d.GitOpsCommit, &src, &committed, &started, &finished, &d.State, &d.Description); err != nil {
			return err
		}
		d.CommittedAt, d.StartedAt = fromMS(committed), fromMS(started)
		if finished.Valid {
			t := fromMS(finished.Int64)
			d.FinishedAt = &t
		}
		if err := json.Unmarshal([]byte(src), &d.Sources); err != nil {
			return fmt.Errorf("sources of deployment %d: %w", d.ID, err)
		}
		out = append(out, d)
		return nil
	})
	return out, err
}
