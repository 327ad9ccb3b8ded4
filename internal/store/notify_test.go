package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

// listener runs s.Listen until the test ends and hands over what it delivers.
type listener struct {
	store     *store.Store
	changed   chan string // "control plane/environment"
	listening chan struct{}
}

func listen(t *testing.T, s *store.Store) *listener {
	t.Helper()
	l := &listener{store: s, changed: make(chan string, 1000), listening: make(chan struct{}, 10)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Listen(ctx, store.Changes{
			Changed:   func(cp, env string) { l.changed <- cp + "/" + env },
			Listening: func() { l.listening <- struct{}{} },
			Failed:    func(err error) { t.Errorf("listener failed: %v", err) },
		})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done, "Listen returns nil when its context ends")
	})
	select {
	case <-l.listening:
	case <-time.After(30 * time.Second):
		t.Fatal("the listener did not connect")
	}
	return l
}

// replicas opens two Stores on a new PostgreSQL database, a and b, and listens with b.
func replicas(t *testing.T) (*clock, *store.Store, *listener) {
	c := &clock{t: time.Date(2026, 8, 24, 9, 0, 0, 0, time.UTC)}
	url := pgServer(t).NewDatabase(t)
	a, b := openURL(t, url, c), openURL(t, url, c)
	return c, a, listen(t, b)
}

// next returns the next change delivered.
func (l *listener) next(t *testing.T) string {
	t.Helper()
	select {
	case c := <-l.changed:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no change delivered")
		return ""
	}
}

// envReport is a report of cluster in environment env of org/cp.
func envReport(c *clock, env, cluster string) store.Report {
	r := report(c, cluster, "aaa", store.StateSuccess)
	r.Environment, r.Digest = env, env+"/"+cluster
	return r
}

// On PostgreSQL, a report committed by one Store (one replica) is delivered to the listener
// of another; a Store skips its own notices, and a rolled-back transaction sends nothing.
// PostgreSQL delivers one listener's notices in commit order, so a sentinel committed last
// proves that nothing else was delivered before it.
func TestListenDeliversOtherReplicasCommits(t *testing.T) {
	ctx := context.Background()
	c, a, l := replicas(t)

	_, err := a.Ingest(ctx, []store.Report{envReport(c, "dev", "west-01"), envReport(c, "dev", "west-02"), envReport(c, "stage", "west-01")}, window)
	require.NoError(t, err)
	require.Equal(t, "org/cp/dev", l.next(t), "each environment of a batch once, in order")
	require.Equal(t, "org/cp/stage", l.next(t))

	_, err = l.store.Ingest(ctx, []store.Report{envReport(c, "own", "west-01")}, window)
	require.NoError(t, err)
	require.NoError(t, store.NotifyRolledBackForTest(ctx, a, "org/cp", "rolled-back"))
	_, err = a.Ingest(ctx, []store.Report{envReport(c, "dev", "west-01")}, window)
	require.NoError(t, err) // a replay: nothing stored, nothing announced
	_, err = a.Ingest(ctx, []store.Report{envReport(c, "sentinel", "west-01")}, window)
	require.NoError(t, err)
	require.Equal(t, "org/cp/sentinel", l.next(t), "own notices, rolled-back ones and replays are not delivered")

	c.add(time.Hour)
	retired, err := a.RetireSilent(ctx, c.now().Add(-time.Minute), "silent for reports.retireAfter")
	require.NoError(t, err)
	require.Len(t, retired, 5)
	require.Equal(t, "org/cp/dev", l.next(t), "retiring clusters changes their environments")
	require.Equal(t, "org/cp/own", l.next(t), "another replica's retirement is delivered")
	require.Equal(t, "org/cp/sentinel", l.next(t))
	require.Equal(t, "org/cp/stage", l.next(t))
}

// A batch changing more environments than one notice holds is announced in several.
func TestListenSplitsLargeChanges(t *testing.T) {
	ctx := context.Background()
	c, a, l := replicas(t)
	var batch []store.Report
	var want []string
	for i := range 300 {
		env := fmt.Sprintf("env-%03d-%s", i, strings.Repeat("x", 50))
		batch = append(batch, envReport(c, env, "west-01"))
		want = append(want, "org/cp/"+env)
	}
	_, err := a.Ingest(ctx, batch, window)
	require.NoError(t, err)
	var got []string
	for range want {
		got = append(got, l.next(t))
	}
	require.Equal(t, want, got)
}

// With SQLite (one replica, which wakes its own waits) Listen returns at once.
func TestListenReturnsAtOnceOnSQLite(t *testing.T) {
	s, err := store.Open(context.Background(), store.Options{Driver: store.SQLite, Path: filepath.Join(t.TempDir(), "hub.db")})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Listen(context.Background(), store.Changes{Changed: func(string, string) { t.Error("a change delivered on SQLite") }}))
}
