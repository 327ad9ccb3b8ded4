package store

import (
	"context"
	"fmt"
	"strings"
)

// TypeCount counts the registered clusters of one cluster type by verdict: compliant when the
// newest report of every object of the cluster is a success on an allowed commit, failed when
// one is a failure on an allowed commit; the others are stragglers.
type TypeCount struct {
	ClusterType string
	Registered  int
	Compliant   int
	Failed      int
}

// verdictQuery classifies each registered cluster of an environment against the allowed
// commits. It reads cluster_state in its key order (one pass, no sort): every registered
// cluster has state, since it is registered with its first report; retired ones are left out.
func verdictQuery(allowed int) string {
	in := "(" + strings.TrimSuffix(strings.Repeat("?,", max(1, allowed)), ",") + ")"
	return `SELECT s.cluster AS name, MAX(s.cluster_type) AS cluster_type,
		SUM(CASE WHEN s.gitops_commit IN ` + in + ` AND s.state = 'success' THEN 1 ELSE 0 END) AS ok,
		SUM(CASE WHEN s.gitops_commit IN ` + in + ` AND s.state = 'failure' THEN 1 ELSE 0 END) AS bad,
		COUNT(*) AS objects
		FROM cluster_state s
		WHERE s.control_plane = ? AND s.environment = ? AND s.cluster NOT IN
			(SELECT name FROM clusters WHERE control_plane = ? AND environment = ? AND retired_at IS NOT NULL)
		GROUP BY s.cluster`
}

// verdictArgs are the arguments of verdictQuery.
func verdictArgs(cp, env string, allowed []string) []any {
	if len(allowed) == 0 {
		allowed = []string{""}
	}
	var args []any
	for range 2 {
		for _, a := range allowed {
			args = append(args, a)
		}
	}
	return append(args, cp, env, cp, env)
}

// GateCounts classifies the registered clusters of an environment against the allowed
// GitOps commits and counts them per cluster type, in the database.
func (s *Store) GateCounts(ctx context.Context, cp, env string, allowed []string) ([]TypeCount, error) {
	rows, err := s.query(ctx, s.db, `SELECT cluster_type, COUNT(*),
		SUM(CASE WHEN bad = 0 AND objects > 0 AND ok = objects THEN 1 ELSE 0 END),
		SUM(CASE WHEN bad > 0 THEN 1 ELSE 0 END)
		FROM (`+verdictQuery(len(allowed))+`) v GROUP BY cluster_type ORDER BY cluster_type`, verdictArgs(cp, env, allowed)...)
	if err != nil {
		return nil, fmt.Errorf("store: gate of %s/%s: %w", cp, env, err)
	}
	var out []TypeCount
	err = eachRow(rows, func() error {
		var t TypeCount
		err := rows.Scan(&t.ClusterType, &t.Registered, &t.Compliant, &t.Failed)
		out = append(out, t)
		return err
	})
	return out, err
}

// Verdicts of GateNames.
const (
	VerdictFailed    = "failed"
	VerdictStraggler = "straggler"
)

// GateNames lists the first clusters (by name, at most limit) of an environment with a
// verdict (VerdictFailed or VerdictStraggler), of one cluster type when clusterType is set.
func (s *Store) GateNames(ctx context.Context, cp, env string, allowed []string, verdict, clusterType string, limit int) ([]string, error) {
	cond := `bad > 0`
	if verdict == VerdictStraggler {
		cond = `bad = 0 AND NOT (objects > 0 AND ok = objects)`
	}
	args := verdictArgs(cp, env, allowed)
	if clusterType != "" {
		cond += ` AND cluster_type = ?`
		args = append(args, clusterType)
	}
	rows, err := s.query(ctx, s.db, `SELECT name FROM (`+verdictQuery(len(allowed))+`) v WHERE `+cond+` ORDER BY name LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: gate of %s/%s: %w", cp, env, err)
	}
	var out []string
	err = eachRow(rows, func() error {
		var n string
		err := rows.Scan(&n)
		out = append(out, n)
		return err
	})
	return out, err
}
