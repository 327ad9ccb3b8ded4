package e2e

import (
	"database/sql"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/hub"
	"github.com/kalypso-gitops/kalypso/internal/pgtest"
)

// Two replicas on one PostgreSQL store: a cluster's report received by the replica that does
// not hold dev's promotion wait wakes the wait in the one that does (LISTEN/NOTIFY). The
// compliance poll is slower than the test, and the report posts no commit status, so only
// the notice can make the holder decide. Replica b starts last and hears no webhook (replica
// a holds the resync's lease too), so it renders dev only because a report names it.
func TestE2EReplicasReportWakesTheWaitHeldByAnother(t *testing.T) {
	w := newWorld(t)
	url := pgtest.Shared(t).NewDatabase(t)
	c := newCluster(w, 2, "KALYPSO_STORE_DRIVER=postgres", "KALYPSO_STORE_URL="+url,
		"KALYPSO_REPORTS_SECRET="+reportSecret, "KALYPSO_PROMOTION_POLL_INTERVAL=10m")
	c.routeTo(map[string]int{"": 0}) // every delivery to replica a
	c.start(0)
	main1 := w.declareChain(devGate("      minClusters: 2\n"), stageManual)
	merge1 := w.mergeEnvPR("dev", main1)
	w.waitStatus("dev", main1, "pending", "0/2 clusters compliant")
	c.start(1)
	require.Equal(t, 0, c.waitHolder(url, "dev"))
	require.Contains(t, w.logs.String(), "another replica resyncs this installation")

	b := c.replicas[1]
	c.reportTo(b, "c-000", "large", merge1)
	w.waitStatus("dev", main1, "pending", "1/2 clusters compliant")
	c.reportTo(b, "c-001", "small", merge1)
	w.waitStatus("dev", main1, "success", "deployed to 2 clusters")
	noRaces(t, w)
}

// waitHolder returns the index of the replica holding env's promotion lease, read from the
// store's leases (a holder is named HOST/PID).
func (c *cluster) waitHolder(url, env string) int {
	t := c.w.t
	t.Helper()
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer db.Close()
	var holder string
	require.NoError(t, db.QueryRow(`SELECT holder FROM leases WHERE key LIKE 'wait/%/' || $1`, env).Scan(&holder))
	parts := strings.Split(holder, "/")
	require.Len(t, parts, 2, holder)
	for i, r := range c.replicas {
		if r.proc != nil && strconv.Itoa(r.proc.cmd.Process.Pid) == parts[1] {
			return i
		}
	}
	t.Fatalf("no replica holds %s", holder)
	return -1
}

// reportTo sends a cluster's signed Flux event to replica r until it is accepted: a replica
// answers 503 (retry, as Flux does) until it has rendered the environment.
func (c *cluster) reportTo(r *replica, cluster, clusterType, sha string) {
	w := c.w
	w.t.Helper()
	var last string
	w.eventually(func() bool {
		body := fluxEvent(cluster, clusterType, sha, false, time.Now())
		code, answer := w.postReportTo(r.addr, body, map[string]string{hub.HeaderSignature: hub.Sign([]byte(reportSecret), body)})
		last = strconv.Itoa(code) + " " + answer
		require.Contains(w.t, []int{http.StatusAccepted, http.StatusServiceUnavailable}, code, last)
		return code == http.StatusAccepted
	}, "replica "+r.name+" accepts the report of "+cluster)
}
