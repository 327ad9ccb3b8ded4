package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// ObjectState is the newest report of one reconciler object of a cluster.
type ObjectState struct {
	Object       string
	Source       string
	GitOpsCommit string
	State        string
	Reason       string
	Message      string
	EventAt      time.Time
	ReceivedAt   time.Time
	Since        time.Time // since when the object reports this GitOps commit
}

// ClusterState is a registered cluster with the newest report of each of its objects.
type ClusterState struct {
	Name        string
	ClusterType string
	FirstSeen   time.Time
	LastSeen    time.Time
	Objects     []ObjectState // none when the cluster has only reports that were refused
}

// StateQuery selects clusters of one environment.
type StateQuery struct {
	ControlPlane, Environment string
	ClusterType               string // "" for every cluster type
	Name                      string // "" for every cluster, else only this one
	After                     string // only clusters named after this one (paging)
	Limit                     int    // at most this many clusters (0: all)
}

// States lists the registered clusters that q selects, by name, with their objects' states.
func (s *Store) States(ctx context.Context, q StateQuery) ([]ClusterState, error) {
	where := `c.control_plane = ? AND c.environment = ? AND c.retired_at IS NULL AND c.name > ?`
	args := []any{q.ControlPlane, q.Environment, q.After}
	if q.ClusterType != "" {
		where += ` AND c.cluster_type = ?`
		args = append(args, q.ClusterType)
	}
	if q.Name != "" {
		where += ` AND c.name = ?`
		args = append(args, q.Name)
	}
	from := `clusters c`
	if q.Limit > 0 {
		from = `(SELECT * FROM clusters c WHERE ` + where + ` ORDER BY c.name LIMIT ?) c`
		args = append(args, q.Limit)
		where = `1 = 1`
	}
	rows, err := s.query(ctx, s.db, `SELECT c.name, c.cluster_type, c.first_seen, c.last_seen, s.object, s.source, s.gitops_commit,
		s.state, s.reason, s.message, s.event_at, s.received_at, s.since_at
		FROM `+from+` LEFT JOIN cluster_state s ON s.control_plane = c.control_plane AND s.environment = c.environment AND s.cluster = c.name
		WHERE `+where+` ORDER BY c.name, s.object`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: states of %s/%s: %w", q.ControlPlane, q.Environment, err)
	}
	var out []ClusterState
	err = eachRow(rows, func() error {
		var c ClusterState
		var first, last int64
		var obj, src, commit, state, reason, msg sql.NullString
		var ev, rec, since sql.NullInt64
		if err := rows.Scan(&c.Name, &c.ClusterType, &first, &last, &obj, &src, &commit, &state, &reason, &msg, &ev, &rec, &since); err != nil {
			return err
		}
		if len(out) == 0 || out[len(out)-1].Name != c.Name {
			c.FirstSeen, c.LastSeen = fromMS(first), fromMS(last)
			out = append(out, c)
		}
		if obj.Valid {
			cur := &out[len(out)-1]
			cur.Objects = append(cur.Objects, ObjectState{Object: obj.String, Source: src.String, GitOpsCommit: commit.String,
				State: state.String, Reason: reason.String, Message: msg.String, EventAt: fromMS(ev.Int64),
				ReceivedAt: fromMS(rec.Int64), Since: fromMS(since.Int64)})
		}
		return nil
	})
	return out, err
}

// CommitCount is how many objects of an environment's cluster type report a GitOps commit
// in a state.
type CommitCount struct {
	ClusterType  string
	GitOpsCommit string
	State        string
	Objects      int
	Clusters     int
	Since        time.Time // the earliest time an object reported this commit
}

// CommitCounts groups the newest states of an environment's registered clusters by cluster
// type, GitOps commit and state.
func (s *Store) CommitCounts(ctx context.Context, cp, env string) ([]CommitCount, error) {
	rows, err := s.query(ctx, s.db, `SELECT s.cluster_type, s.gitops_commit, s.state, COUNT(*), COUNT(DISTINCT s.cluster), MIN(s.since_at)
		FROM cluster_state s WHERE s.control_plane = ? AND s.environment = ? AND s.cluster NOT IN
			(SELECT name FROM clusters WHERE control_plane = ? AND environment = ? AND retired_at IS NOT NULL)
		GROUP BY s.cluster_type, s.gitops_commit, s.state ORDER BY s.cluster_type, s.gitops_commit, s.state`, cp, env, cp, env)
	if err != nil {
		return nil, fmt.Errorf("store: commits of %s/%s: %w", cp, env, err)
	}
	var out []CommitCount
	err = eachRow(rows, func() error {
		var c CommitCount
		var since int64
		err := rows.Scan(&c.ClusterType, &c.GitOpsCommit, &c.State, &c.Objects, &c.Clusters, &since)
		c.Since = fromMS(since)
		out = append(out, c)
		return err
	})
	return out, err
}

// HistoryEntry is one stored report.
type HistoryEntry struct {
	Cluster, Object, ClusterType, Source, GitOpsCommit, State, Reason, Message string
	EventAt, ReceivedAt                                                        time.Time
}

// ClusterHistory lists the newest reports of one cluster, newest first, at most limit.
func (s *Store) ClusterHistory(ctx context.Context, cp, env, cluster string, limit int) ([]HistoryEntry, error) {
	rows, err := s.query(ctx, s.db, `SELECT cluster, object, cluster_type, source, gitops_commit, state, reason, message, event_at, received_at
		FROM reports WHERE control_plane = ? AND environment = ? AND cluster = ? ORDER BY event_at DESC, id DESC LIMIT ?`,
		cp, env, cluster, limit)
	if err != nil {
		return nil, fmt.Errorf("store: history of cluster %s: %w", cluster, err)
	}
	var out []HistoryEntry
	err = eachRow(rows, func() error {
		var h HistoryEntry
		var ev, rec int64
		err := rows.Scan(&h.Cluster, &h.Object, &h.ClusterType, &h.Source, &h.GitOpsCommit, &h.State, &h.Reason, &h.Message, &ev, &rec)
		h.EventAt, h.ReceivedAt = fromMS(ev), fromMS(rec)
		out = append(out, h)
		return err
	})
	return out, err
}

// CountReports returns the number of stored reports.
func (s *Store) CountReports(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM reports`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count reports: %w", err)
	}
	return n, nil
}

// Behind counts the registered clusters of an environment with an object whose newest
// report is about another GitOps commit than commit, and lists the first of them by name
// (at most limit objects), each with those objects.
func (s *Store) Behind(ctx context.Context, cp, env, commit string, limit int) (int, []ClusterState, error) {
	const from = ` FROM cluster_state s JOIN clusters c ON c.control_plane = s.control_plane AND c.environment = s.environment AND c.name = s.cluster
		WHERE s.control_plane = ? AND s.environment = ? AND c.retired_at IS NULL AND s.gitops_commit <> ?`
	var n int
	if err := s.queryRow(ctx, s.db, `SELECT COUNT(DISTINCT s.cluster) FROM cluster_state s WHERE s.control_plane = ? AND s.environment = ?
		AND s.gitops_commit <> ? AND s.cluster NOT IN (SELECT name FROM clusters WHERE control_plane = ? AND environment = ? AND retired_at IS NOT NULL)`,
		cp, env, commit, cp, env).Scan(&n); err != nil {
		return 0, nil, fmt.Errorf("store: clusters behind in %s/%s: %w", cp, env, err)
	}
	rows, err := s.query(ctx, s.db, `SELECT c.name, c.cluster_type, c.first_seen, c.last_seen, s.object, s.gitops_commit, s.state, s.event_at, s.since_at`+
		from+` ORDER BY c.name, s.object LIMIT ?`, cp, env, commit, limit)
	if err != nil {
		return 0, nil, fmt.Errorf("store: clusters behind in %s/%s: %w", cp, env, err)
	}
	var out []ClusterState
	err = eachRow(rows, func() error {
		var c ClusterState
		var o ObjectState
		var first, last, ev, since int64
		if err := rows.Scan(&c.Name, &c.ClusterType, &first, &last, &o.Object, &o.GitOpsCommit, &o.State, &ev, &since); err != nil {
			return err
		}
		o.EventAt, o.Since = fromMS(ev), fromMS(since)
		if len(out) == 0 || out[len(out)-1].Name != c.Name {
			c.FirstSeen, c.LastSeen = fromMS(first), fromMS(last)
			out = append(out, c)
		}
		out[len(out)-1].Objects = append(out[len(out)-1].Objects, o)
		return nil
	})
	return n, out, err
}
