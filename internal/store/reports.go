package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Report is one accepted report of a cluster's reconciler, attributed to its environment.
type Report struct {
	ControlPlane string // owner/name of the control-plane repository
	Environment  string
	ClusterType  string
	Cluster      string
	Object       string // the reconciler object, such as Kustomization/flux-system/gitops-dev
	Source       string // flux, argocd or generic
	GitOpsCommit string // the GitOps commit the report is about
	State        string // StateSuccess, StateFailure or StatePending
	Reason       string
	Message      string
	EventAt      time.Time // when the reconciler says it happened
	ReceivedAt   time.Time // when the app received it
	// Digest identifies the report's body for the replay cache; "" skips the check.
	Digest string
}

// Report states.
const (
	StateSuccess = "success"
	StateFailure = "failure"
	StatePending = "pending"
)

// Outcome is what became of one report of a batch.
type Outcome int

// Outcomes of Ingest.
const (
	Accepted Outcome = iota // stored
	Replayed                // the same body was accepted before, within the replay window
	OverCap                 // its cluster is new and its environment has MaxClusters already
)

// String names the outcome.
func (o Outcome) String() string {
	return [...]string{"accepted", "replayed", "over the cap of clusters"}[o]
}

// IngestOptions bounds what a batch may add.
type IngestOptions struct {
	// MaxClusters caps the registered clusters of one environment (0: no cap).
	MaxClusters int
	// ReplayWindow is how long a body's digest is kept after its event time.
	ReplayWindow time.Duration
}

// envKey names an environment of a control plane.
type envKey struct{ cp, env string }

// clusterKey names a cluster of an environment.
type clusterKey struct {
	envKey
	name string
}

// Ingest stores a batch of reports in one transaction: the replay check, the inventory
// (a cluster is registered on its first report, within the cap), each object's newest state
// and the history. It returns one outcome per report; nothing is stored when it fails.
func (s *Store) Ingest(ctx context.Context, batch []Report, o IngestOptions) ([]Outcome, error) {
	out := make([]Outcome, len(batch))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		clear(out)
		if err := s.checkReplay(ctx, tx, batch, out, o.ReplayWindow); err != nil {
			return err
		}
		joined, err := s.register(ctx, tx, batch, out, o.MaxClusters)
		if err != nil {
			return err
		}
		var kept, known []Report
		for i, r := range batch {
			if out[i] == Accepted {
				kept = append(kept, r)
				if !joined[clusterKey{envKey{r.ControlPlane, r.Environment}, r.Cluster}] {
					known = append(known, r)
				}
			}
		}
		if err := s.touchClusters(ctx, tx, known); err != nil {
			return err
		}
		if err := s.upsertState(ctx, tx, kept); err != nil {
			return err
		}
		if err := s.insertHistory(ctx, tx, kept); err != nil {
			return err
		}
		return s.notifyChanged(ctx, tx, envsOf(kept))
	})
	if err != nil {
		return nil, fmt.Errorf("store: ingest %d reports: %w", len(batch), err)
	}
	return out, nil
}

// checkReplay marks reports whose digest is already stored, or repeated in the batch.
func (s *Store) checkReplay(ctx context.Context, tx *sql.Tx, batch []Report, out []Outcome, window time.Duration) error {
	first := map[string]int{}
	var digests []string
	var args []any
	for i, r := range batch {
		if r.Digest == "" {
			continue
		}
		if _, dup := first[r.Digest]; dup {
			out[i] = Replayed
			continue
		}
		first[r.Digest] = i
		digests = append(digests, r.Digest)
		args = append(args, ms(r.EventAt), r.Digest, ms(r.EventAt.Add(window)))
	}
	fresh := map[string]bool{}
	err := s.chunked(len(digests), replaySQL.cols, func(lo, hi int) error {
		rows, err := s.queryPrepared(ctx, tx, replaySQL.text(hi-lo), args[3*lo:3*hi]...)
		if err != nil {
			return fmt.Errorf("replay cache: %w", err)
		}
		return eachRow(rows, func() error {
			var d string
			err := rows.Scan(&d)
			fresh[d] = true
			return err
		})
	})
	for _, d := range digests {
		if !fresh[d] {
			out[first[d]] = Replayed
		}
	}
	return err
}

// eachRow calls fn for every row and closes rows.
func eachRow(rows *sql.Rows, fn func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// register adds the batch's new clusters (and clusters coming back from retirement) to the
// inventory while their environment is under maxClusters, and returns them; the reports of
// the others are marked OverCap.
func (s *Store) register(ctx context.Context, tx *sql.Tx, batch []Report, out []Outcome, maxClusters int) (map[clusterKey]bool, error) {
	byEnv := map[envKey][]int{}
	for i, r := range batch {
		if out[i] == Accepted {
			k := envKey{r.ControlPlane, r.Environment}
			byEnv[k] = append(byEnv[k], i)
		}
	}
	keys := make([]envKey, 0, len(byEnv))
	for k := range byEnv {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b envKey) int { return compareEnv(a, b) })
	joined := map[clusterKey]bool{}
	for _, k := range keys {
		if err := s.registerIn(ctx, tx, k, batch, byEnv[k], out, maxClusters, joined); err != nil {
			return nil, err
		}
	}
	return joined, nil
}

func compareEnv(a, b envKey) int {
	return cmp.Or(strings.Compare(a.cp, b.cp), strings.Compare(a.env, b.env))
}

// registerIn registers the new clusters of one environment.
func (s *Store) registerIn(ctx context.Context, tx *sql.Tx, k envKey, batch []Report, idx []int, out []Outcome, maxClusters int, joined map[clusterKey]bool) error {
	names := map[string]bool{}
	for _, i := range idx {
		names[batch[i].Cluster] = true
	}
	known, err := s.knownClusters(ctx, tx, k, slices.Sorted(maps.Keys(names)))
	if err != nil {
		return err
	}
	var joining []int // first report of each cluster to register, in batch order
	seen := map[string]bool{}
	for _, i := range idx {
		c := batch[i].Cluster
		if st, ok := known[c]; (ok && !st.retired) || seen[c] {
			continue
		}
		seen[c] = true
		joining = append(joining, i)
	}
	if len(joining) == 0 {
		return nil
	}
	count, err := s.lockCount(ctx, tx, k)
	if err != nil {
		return err
	}
	refused := map[string]bool{}
	var newcomers []Report
	for _, i := range joining {
		r := batch[i]
		if maxClusters > 0 && count >= int64(maxClusters) {
			refused[r.Cluster] = true
			continue
		}
		count++
		joined[clusterKey{k, r.Cluster}] = true
		newcomers = append(newcomers, r)
	}
	if err := s.joinClusters(ctx, tx, newcomers, known); err != nil {
		return err
	}
	for _, i := range idx {
		if refused[batch[i].Cluster] {
			out[i] = OverCap
		}
	}
	_, err = s.exec(ctx, tx, `UPDATE environment_counts SET clusters = ? WHERE control_plane = ? AND environment = ?`, count, k.cp, k.env)
	return err
}

type knownCluster struct{ retired bool }

// knownClusters reads which of names are in the inventory of k, and whether they are retired.
func (s *Store) knownClusters(ctx context.Context, tx *sql.Tx, k envKey, names []string) (map[string]knownCluster, error) {
	known := map[string]knownCluster{}
	err := s.chunked(len(names), knownSQL.cols, func(lo, hi int) error {
		args := []any{k.cp, k.env}
		for _, n := range names[lo:hi] {
			args = append(args, n)
		}
		rows, err := s.queryPrepared(ctx, tx, knownSQL.text(hi-lo), args...)
		if err != nil {
			return fmt.Errorf("inventory: %w", err)
		}
		return eachRow(rows, func() error {
			var n string
			var retired sql.NullInt64
			err := rows.Scan(&n, &retired)
			known[n] = knownCluster{retired: retired.Valid}
			return err
		})
	})
	return known, err
}

// lockCount reads (creating it if needed) and locks the cluster count of an environment.
func (s *Store) lockCount(ctx context.Context, tx *sql.Tx, k envKey) (int64, error) {
	if _, err := s.exec(ctx, tx, `INSERT INTO environment_counts (control_plane, environment, clusters) VALUES (?, ?, 0)
		ON CONFLICT (control_plane, environment) DO NOTHING`, k.cp, k.env); err != nil {
		return 0, fmt.Errorf("cluster count: %w", err)
	}
	var n int64
	err := s.queryRow(ctx, tx, `SELECT clusters FROM environment_counts WHERE control_plane = ? AND environment = ?`+s.dialect.forUpdate(), k.cp, k.env).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("cluster count: %w", err)
	}
	return n, nil
}

// joinClusters registers new clusters, or brings retired ones back, and records each.
func (s *Store) joinClusters(ctx context.Context, tx *sql.Tx, joined []Report, known map[string]knownCluster) error {
	err := s.chunked(len(joined), joinSQL.cols, func(lo, hi int) error {
		var args []any
		for _, r := range joined[lo:hi] {
			at := ms(r.ReceivedAt)
			args = append(args, r.ControlPlane, r.Environment, r.Cluster, r.ClusterType, at, at)
		}
		_, err := s.execPrepared(ctx, tx, joinSQL.text(hi-lo), args...)
		if err != nil {
			return fmt.Errorf("register clusters: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.chunked(len(joined), joinEventsSQL.cols, func(lo, hi int) error {
		var args []any
		for _, r := range joined[lo:hi] {
			kind, detail := ClusterRegistered, "first report, cluster type "+r.ClusterType
			if known[r.Cluster].retired {
				kind, detail = ClusterReturned, "reported again after retirement, cluster type "+r.ClusterType
			}
			args = append(args, r.ControlPlane, r.Environment, r.Cluster, ms(r.ReceivedAt), kind, detail)
		}
		_, err := s.execPrepared(ctx, tx, joinEventsSQL.text(hi-lo), args...)
		if err != nil {
			return fmt.Errorf("record registrations: %w", err)
		}
		return nil
	})
}

// lastSeenStep is the resolution of a cluster's last-seen time, in milliseconds: a report
// less than a minute after the stored time leaves the row untouched (no page to write).
const lastSeenStep = 60000

// touchClusters moves the last-seen time of the reporting clusters forward (to the minute)
// and takes a change of cluster type.
func (s *Store) touchClusters(ctx context.Context, tx *sql.Tx, kept []Report) error {
	last := map[clusterKey]Report{}
	for _, r := range kept {
		k := clusterKey{envKey{r.ControlPlane, r.Environment}, r.Cluster}
		if prev, ok := last[k]; !ok || r.ReceivedAt.After(prev.ReceivedAt) {
			last[k] = r
		}
	}
	rows := slices.SortedFunc(maps.Values(last), func(a, b Report) int {
		return strings.Compare(a.ControlPlane+"\x00"+a.Environment+"\x00"+a.Cluster, b.ControlPlane+"\x00"+b.Environment+"\x00"+b.Cluster)
	})
	return s.chunked(len(rows), touchSQL.cols, func(lo, hi int) error {
		var args []any
		for _, r := range rows[lo:hi] {
			at := ms(r.ReceivedAt)
			args = append(args, r.ControlPlane, r.Environment, r.Cluster, r.ClusterType, at, at)
		}
		_, err := s.execPrepared(ctx, tx, touchSQL.text(hi-lo), append(args, lastSeenStep)...)
		if err != nil {
			return fmt.Errorf("inventory: %w", err)
		}
		return nil
	})
}

// upsertState keeps the newest report (by event time) of each object of each cluster; the
// time since which an object runs its commit is kept while the commit stays the same.
func (s *Store) upsertState(ctx context.Context, tx *sql.Tx, kept []Report) error {
	type objKey struct {
		clusterKey
		object string
	}
	newest := map[objKey]Report{}
	for _, r := range kept {
		k := objKey{clusterKey{envKey{r.ControlPlane, r.Environment}, r.Cluster}, r.Object}
		if prev, ok := newest[k]; !ok || !r.EventAt.Before(prev.EventAt) {
			newest[k] = r
		}
	}
	rows := slices.SortedFunc(maps.Values(newest), func(a, b Report) int {
		return strings.Compare(a.ControlPlane+"\x00"+a.Environment+"\x00"+a.Cluster+"\x00"+a.Object,
			b.ControlPlane+"\x00"+b.Environment+"\x00"+b.Cluster+"\x00"+b.Object)
	})
	return s.chunked(len(rows), stateSQL.cols, func(lo, hi int) error {
		var args []any
		for _, r := range rows[lo:hi] {
			args = append(args, r.ControlPlane, r.Environment, r.Cluster, r.Object, r.ClusterType, r.Source, r.GitOpsCommit,
				r.State, r.Reason, r.Message, ms(r.EventAt), ms(r.ReceivedAt), ms(r.EventAt))
		}
		_, err := s.execPrepared(ctx, tx, stateSQL.text(hi-lo), args...)
		if err != nil {
			return fmt.Errorf("cluster state: %w", err)
		}
		return nil
	})
}

// insertHistory appends the reports to the history.
func (s *Store) insertHistory(ctx context.Context, tx *sql.Tx, kept []Report) error {
	return s.chunked(len(kept), historySQL.cols, func(lo, hi int) error {
		var args []any
		for _, r := range kept[lo:hi] {
			args = append(args, r.ControlPlane, r.Environment, r.Cluster, r.Object, r.ClusterType, r.Source, r.GitOpsCommit,
				r.State, r.Reason, r.Message, ms(r.EventAt), ms(r.ReceivedAt))
		}
		_, err := s.execPrepared(ctx, tx, historySQL.text(hi-lo), args...)
		if err != nil {
			return fmt.Errorf("history: %w", err)
		}
		return nil
	})
}
