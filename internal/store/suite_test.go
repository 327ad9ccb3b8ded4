package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/pgtest"
	"github.com/kalypso-gitops/kalypso/internal/store"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

func pgServer(t *testing.T) *pgtest.Server { return pgtest.Shared(t) }

func openURL(t *testing.T, url string, c *clock) *store.Store {
	s, err := store.Open(context.Background(), store.Options{Driver: store.Postgres, URL: url, Now: c.now})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// suite runs fn against each driver, with a fresh database each.
func suite(t *testing.T, fn func(t *testing.T, c *clock, reopen func() *store.Store)) {
	for _, driver := range []string{store.SQLite, store.Postgres} {
		t.Run(driver, func(t *testing.T) {
			c := &clock{t: time.Date(2026, 8, 24, 9, 0, 0, 0, time.UTC)}
			var reopen func() *store.Store
			if driver == store.SQLite {
				path := filepath.Join(t.TempDir(), "hub.db")
				reopen = func() *store.Store {
					s, err := store.Open(context.Background(), store.Options{Driver: store.SQLite, Path: path, Now: c.now})
					require.NoError(t, err)
					t.Cleanup(func() { s.Close() })
					return s
				}
			} else {
				url := pgServer(t).NewDatabase(t)
				reopen = func() *store.Store { return openURL(t, url, c) }
			}
			fn(t, c, reopen)
		})
	}
}

// report builds a report of cluster at event time at.
func report(c *clock, cluster, commit, state string) store.Report {
	return store.Report{ControlPlane: "org/cp", Environment: "dev", ClusterType: "large", Cluster: cluster,
		Object: "Kustomization/flux-system/gitops-dev", Source: "flux", GitOpsCommit: commit, State: state,
		Reason: "ReconciliationSucceeded", Message: "ok", EventAt: c.now(), ReceivedAt: c.now(),
		Digest: fmt.Sprintf("%s-%s-%s-%d", cluster, commit, state, c.now().UnixNano())}
}

var window = store.IngestOptions{ReplayWindow: 5 * time.Minute}

func TestMigrationsAreVersionedAndApplyOnce(t *testing.T) {
	suite(t, func(t *testing.T, c *clock, reopen func() *store.Store) {
		ctx := context.Background()
		all, err := store.Migrations()
		require.NoError(t, err)
		require.NotEmpty(t, all)
		s := reopen()
		v, err := s.SchemaVersion(ctx)
		require.NoError(t, err)
		require.Equal(t, len(all), v)
		_, err = s.Ingest(ctx, []store.Report{report(c, "west-01", "aaa", store.StateSuccess)}, window)
		require.NoError(t, err)
		again := reopen() // a restart: the migrations are not applied twice and nothing is lost
		v, err = again.SchemaVersion(ctx)
		require.NoError(t, err)
		require.Equal(t, len(all), v)
		states, err := again.States(ctx, store.StateQuery{ControlPlane: "org/cp", Environment: "dev"})
		require.NoError(t, err)
		require.Len(t, states, 1)
		require.Equal(t, "west-01", states[0].Name)
	})
}

func TestIngestRefusesReplaysInAndAcrossBatches(t *testing.T) {
	suite(t, func(t *testing.T, c *clock, reopen func() *store.Store) {
		ctx := context.Background()
		s, replica := reopen(), reopen()
		a := report(c, "west-01", "aaa", store.StateSuccess)
		out, err := s.Ingest(ctx, []store.Report{a, a}, window)
		require.NoError(t, err)
		require.Equal(t, []store.Outcome{store.Accepted, store.Replayed}, out)
		out, err = replica.Ingest(ctx, []store.Report{a}, window)
		require.NoError(t, err)
		require.Equal(t, []store.Outcome{store.Replayed}, out, "a second replica sees the digest")
		n, err := s.CountReports(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
	})
}

func TestIngestCapsClustersPerEnvironment(t *testing.T) {
	suite(t, func(t *testing.T, c *clock, reopen func() *store.Store) {
		ctx := context.Background()
		s := reopen()
		capped := store.IngestOptions{MaxClusters: 2, ReplayWindow: time.Minute}
		batch := []store.Report{report(c, "a", "x", "success"), report(c, "b", "x", "success"), report(c, "c", "x", "success")}
		out, err := s.Ingest(ctx, batch, capped)
		require.NoError(t, err)
		require.Equal(t, []store.Outcome{store.Accepted, store.Accepted, store.OverCap}, out)
		c.add(time.Second)
		out, err = s.Ingest(ctx, []store.Report{report(c, "a", "y", "success"), report(c, "d", "y", "success")}, capped)
		require.NoError(t, err)
		require.Equal(t, []store.Outcome{store.Accepted, store.OverCap}, out, "known clusters still report; new ones are refused")
		n, err := s.ClusterCount(ctx, "org/cp", "dev")
		require.NoError(t, err)
		require.Equal(t, 2, n)
	})
}

func TestCapHoldsAcrossConcurrentReplicas(t *testing.T) {
	suite(t, func(t *testing.T, c *clock, reopen func() *store.Store) {
		ctx := context.Background()
		replicas := []*store.Store{reopen(), reopen(), reopen()}
		capped := store.IngestOptions{MaxClusters: 25, ReplayWindow: time.Minute}
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		for i, s := range replicas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 20 {
					r := report(c, fmt.Sprintf("r%d-c%02d", i, j), "x", "success")
					if _, err := s.Ingest(ctx, []store.Report{r}, capped); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		inv, err := replicas[0].Inventory(ctx, "org/cp", "dev", false)
		require.NoError(t, err)
		require.Len(t, inv, 25)
		n, err := replicas[1].ClusterCount(ctx, "org/cp", "dev")
		require.NoError(t, err)
		require.Equal(t, 25, n)
	})
}

func TestNewestReportByEventTimeWinsAndSinceIsKept(t *testing.T) {
	suite(t, func(t *testing.T, c *clock, reopen func() *store.Store) {
		ctx := context.Background()
		s := reopen()
		first := report(c, "west-01", "aaa", store.StateSuccess)
		c.add(time.Minute)
		second := report(c, "west-01", "aaa", store.StateSuccess)
		c.add(time.Minute)
		newer := report(c, "west-01", "bbb", store.StateFailure)
		older := first
		older.GitOpsCommit, older.Digest, older.EventAt = "zzz", "late", first.EventAt.Add(-time.Hour)
		for _, r := range []store.Report{first, second} {
			_, err := s.Ingest(ctx, []store.Report{r}, window)
			require.NoError(t, err)
		}
		st, err := s.States(ctx, store.StateQuery{ControlPlane: "org/cp", Environment: "dev"})
		require.NoError(t, err)
		require.Equal(t, "aaa", st[0].Objects[0].GitOpsCommit)
		require.Equal(t, first.EventAt, st[0].Objects[0].Since, "since stays while the commit is the same")
		_, err = s.Ingest(ctx, []store.Report{newer, older}, window)
		require.NoError(t, err)
		st, err = s.States(ctx, store.StateQuery{ControlPlane: "org/cp", Environment: "dev"})
		require.NoError(t, err)
		o := st[0].Objects[0]
		require.Equal(t, "bbb", o.GitOpsCommit, "a late report of an older event does not win")
		require.Equal(t, store.StateFailure, o.State)
		require.Equal(t, newer.EventAt, o.Since)
		hist, err := s.ClusterHistory(ctx, "org/cp", "dev", "west-01", 10)
		require.NoError(t, err)
		require.Len(t, hist, 4, "every accepted report is in the history")
		counts, err := s.CommitCounts(ctx, "org/cp", "dev")
		require.NoError(t, err)
		require.Equal(t, []store.CommitCount{{ClusterType: "large", GitOpsCommit: "bbb", State: store.StateFailure, Objects: 1, Clusters: 1, Since: newer.EventAt}}, counts)
	})
}

func TestSilentClustersAreRetiredAndRecorded(t *testing.T) {
	suite(t, func(t *testing.T, c *clock, reopen func() *store.Store) {
		ctx := context.Background()
		s := reopen()
		_, err := s.Ingest(ctx, []store.Report{report(c, "quiet", "a", "success"), report(c, "busy", "a", "success")}, window)
		require.NoError(t, err)
		c.add(2 * time.Hour)
		_, err = s.Ingest(ctx, []store.Report{report(c, "busy", "a", "success")}, window)
		require.NoError(t, err)
		retired, err := s.RetireSilent(ctx, c.now().Add(-time.Hour), "silent for more than 1h (reports.retireAfter)")
		require.NoError(t, err)
		require.Len(t, retired, 1)
		require.Equal(t, "quiet", retired[0].Name)
		inv, err := s.Inventory(ctx, "org/cp", "dev", false)
		require.NoError(t, err)
		require.Len(t, inv, 1)
		n, err := s.ClusterCount(ctx, "org/cp", "dev")
		require.NoError(t, err)
		require.Equal(t, 1, n)
		c.add(time.Minute)
		_, err = s.Ingest(ctx, []store.Report{report(c, "quiet", "b", "success")}, window)
		require.NoError(t, err)
		events, err := s.Events(ctx, "org/cp", "dev", 10)
		require.NoError(t, err)
		var kinds []string
		for _, e := range events {
			if e.Cluster == "quiet" {
				kinds = append(kinds, e.Kind)
			}
		}
		require.Equal(t, []string{store.ClusterReturned, store.ClusterRetired, store.ClusterRegistered}, kinds)
		require.Contains(t, events[1].Detail, "reports.retireAfter")
	})
}

func TestLeases(t *testing.T) {
	suite(t, func(t *testing.T, c *clock, reopen func() *store.Store) {
		ctx := context.Background()
		a, b := reopen(), reopen()
		ok, err := a.TryAcquire(ctx, "resync", "replica-a", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = b.TryAcquire(ctx, "resync", "replica-b", time.Minute)
		require.NoError(t, err)
		require.False(t, ok, "held by another holder")
		ok, err = a.TryAcquire(ctx, "resync", "replica-a", time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "the holder renews")
		require.NoError(t, b.Release(ctx, "resync", "replica-b"), "releasing someone else's lease changes nothing")
		ok, err = b.TryAcquire(ctx, "resync", "replica-b", time.Minute)
		require.NoError(t, err)
		require.False(t, ok)
		c.add(2 * time.Minute)
		ok, err = b.TryAcquire(ctx, "resync", "replica-b", time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "an expired lease is taken over")
		require.NoError(t, b.Release(ctx, "resync", "replica-b"))
		ok, err = a.TryAcquire(ctx, "resync", "replica-a", time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "a released lease is free")
	})
}

func TestAuditTrailIsHashChained(t *testing.T) {
	suite(t, func(t *testing.T, c *clock, reopen func() *store.Store) {
		ctx := context.Background()
		a, b := reopen(), reopen()
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := a
				if i%2 == 1 {
					s = b
				}
				_, err := s.AppendAudit(ctx, "promotion", fmt.Sprintf("org/cp/dev@%d", i), `{"decision":"promote"}`)
				require.NoError(t, err)
			}()
		}
		wg.Wait()
		entries, err := a.Audit(ctx, 0, 100)
		require.NoError(t, err)
		require.Len(t, entries, 10)
		for i, e := range entries {
			require.EqualValues(t, i+1, e.Seq)
			if i > 0 {
				require.Equal(t, entries[i-1].Hash, e.PrevHash)
			}
		}
		require.NoError(t, a.VerifyAudit(ctx))
		require.NoError(t, store.TamperAuditForTest(ctx, a, 4, `{"decision":"hold"}`))
		require.ErrorIs(t, a.VerifyAudit(ctx), store.ErrAuditChain)
	})
}

func TestDeploymentHistory(t *testing.T) {
	suite(t, func(t *testing.T, c *clock, reopen func() *store.Store) {
		ctx := context.Background()
		s := reopen()
		d := store.Deployment{ControlPlane: "org/cp", Environment: "dev", MainCommit: "m1", GitOpsCommit: "g1",
			Sources: []store.Source{{Name: "main", Commit: "m1"}}, CommittedAt: c.now().Add(-time.Hour), StartedAt: c.now()}
		id, err := s.StartDeployment(ctx, d)
		require.NoError(t, err)
		again, err := s.StartDeployment(ctx, d)
		require.NoError(t, err)
		require.Equal(t, id, again, "a resumed wait keeps its record")
		c.add(10 * time.Minute)
		require.NoError(t, s.FinishDeployment(ctx, id, "success", "deployed to 3 clusters", c.now()))
		list, err := s.Deployments(ctx, "org/cp", "dev", time.Time{}, 10)
		require.NoError(t, err)
		require.Len(t, list, 1)
		lead, ok := list[0].LeadTime()
		require.True(t, ok)
		require.Equal(t, 70*time.Minute, lead)
		require.Equal(t, d.Sources, list[0].Sources)
	})
}

func TestPruneKeepsTheRetentionWindow(t *testing.T) {
	suite(t, func(t *testing.T, c *clock, reopen func() *store.Store) {
		ctx := context.Background()
		s := reopen()
		_, err := s.Ingest(ctx, []store.Report{report(c, "a", "x", "success")}, window)
		require.NoError(t, err)
		c.add(48 * time.Hour)
		_, err = s.Ingest(ctx, []store.Report{report(c, "a", "y", "success")}, window)
		require.NoError(t, err)
		p, err := s.Prune(ctx, 24*time.Hour)
		require.NoError(t, err)
		require.EqualValues(t, 1, p.Reports)
		require.EqualValues(t, 1, p.Replay)
		n, err := s.CountReports(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		st, err := s.States(ctx, store.StateQuery{ControlPlane: "org/cp", Environment: "dev"})
		require.NoError(t, err)
		require.Equal(t, "y", st[0].Objects[0].GitOpsCommit, "the newest state is kept")
	})
}

func TestGateCountsAndNames(t *testing.T) {
	suite(t, func(t *testing.T, c *clock, reopen func() *store.Store) {
		ctx := context.Background()
		s := reopen()
		batch := []store.Report{report(c, "a-ok", "merge", store.StateSuccess), report(c, "b-bad", "later", store.StateFailure),
			report(c, "c-old", "old", store.StateSuccess), report(c, "d-old-bad", "old", store.StateFailure)}
		two := report(c, "a-ok", "merge", store.StatePending)
		two.Object, two.Digest = "Application/other", "other"
		_, err := s.Ingest(ctx, append(batch, two), window)
		require.NoError(t, err)
		counts, err := s.GateCounts(ctx, "org/cp", "dev", []string{"merge", "later"})
		require.NoError(t, err)
		require.Equal(t, []store.TypeCount{{ClusterType: "large", Registered: 4, Compliant: 0, Failed: 1}}, counts,
			"a-ok has a pending object; a failure on an older commit is a straggler")
		names, err := s.GateNames(ctx, "org/cp", "dev", []string{"merge", "later"}, store.VerdictStraggler, "", 10)
		require.NoError(t, err)
		require.Equal(t, []string{"a-ok", "c-old", "d-old-bad"}, names)
		names, err = s.GateNames(ctx, "org/cp", "dev", []string{"merge", "later"}, store.VerdictFailed, "large", 10)
		require.NoError(t, err)
		require.Equal(t, []string{"b-bad"}, names)
	})
}
