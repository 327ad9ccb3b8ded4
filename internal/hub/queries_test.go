package hub

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rcrowley/go-metrics"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

const (
	shaOld = "1111111111111111111111111111111111111111"
	shaNew = "2222222222222222222222222222222222222222"
)

// queryHub is a hub over an in-memory store with two environments of one control plane:
// dev (GitOps head shaNew, made an hour ago) and stage.
func queryHub(t *testing.T) (*Hub, *store.Store, time.Time) {
	now := time.Date(2026, 8, 24, 12, 0, 0, 0, time.UTC)
	st, err := store.Open(context.Background(), store.Options{Now: func() time.Time { return now }})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	targets := []Target{
		{ControlPlane: "org/cp", Environment: "dev", GitOpsRepo: "org/gitops", GitOpsBranch: "dev", ClusterTypes: []string{"large", "small"}},
		{ControlPlane: "org/cp", Environment: "stage", GitOpsRepo: "org/gitops", GitOpsBranch: "stage", ClusterTypes: []string{"large"}},
	}
	desired := map[string]Desired{
		"dev": {Registrations: map[string]string{"podinfo": "podinfo-reg"}, Assignments: []Assignment{
			{Key: "large/podinfo-dev", ClusterType: "large", Target: "podinfo-dev", Workload: "podinfo", Config: map[string]string{"REGION": "west", "SIZE": "L"}},
			{Key: "small/podinfo-dev", ClusterType: "small", Target: "podinfo-dev", Workload: "podinfo"},
		}},
		"stage": {Registrations: map[string]string{"podinfo": "podinfo-reg"}, Assignments: []Assignment{
			{Key: "large/podinfo-dev", ClusterType: "large", Target: "podinfo-dev", Workload: "podinfo", Config: map[string]string{"REGION": "east", "SIZE": "L"}},
			{Key: "large/podinfo-stage", ClusterType: "large", Target: "podinfo-stage", Workload: "podinfo"},
		}},
	}
	h := New(Options{Store: st, Keys: keysFor, Now: func() time.Time { return now }, Logger: zerolog.Nop(),
		Directory: NewDirectory(func(context.Context) ([]Target, error) { return targets, nil }, time.Hour, time.Hour, func() time.Time { return now }),
		Desired:   func(t Target) (Desired, bool) { d, ok := desired[t.Environment]; return d, ok },
		Head: func(_ context.Context, t Target) (string, time.Time, error) {
			if t.Environment == "dev" {
				return shaNew, now.Add(-time.Hour), nil
			}
			return "", time.Time{}, fmt.Errorf("no branch")
		}})
	require.NoError(t, st.SaveCommit(context.Background(), store.CommitInfo{ControlPlane: "org/cp", Environment: "dev", SHA: shaNew, MainCommit: "m2",
		Sources: []store.Source{{Name: "main", Commit: "m2"}, {Name: "workload podinfo-reg", Commit: "w2"}}}))
	require.NoError(t, st.SaveCommit(context.Background(), store.CommitInfo{ControlPlane: "org/cp", Environment: "dev", SHA: shaOld, MainCommit: "m1",
		Sources: []store.Source{{Name: "workload podinfo-reg", Commit: "w1"}}}))
	var batch []store.Report
	for i := range 5 {
		sha, state := shaNew, store.StateSuccess
		if i >= 3 {
			sha = shaOld
		}
		if i == 4 {
			state = store.StateFailure
		}
		batch = append(batch, store.Report{ControlPlane: "org/cp", Environment: "dev", ClusterType: []string{"large", "small"}[i%2],
			Cluster: fmt.Sprintf("c%d", i), Object: "Kustomization/flux-system/gitops", Source: SourceFlux, GitOpsCommit: sha, State: state,
			Reason: "r", EventAt: now.Add(-2 * time.Hour), ReceivedAt: now.Add(-2 * time.Hour)})
	}
	_, err = st.Ingest(context.Background(), batch, store.IngestOptions{})
	require.NoError(t, err)
	return h, st, now
}

func TestClustersAnswerWhatRunsWhere(t *testing.T) {
	h, _, _ := queryHub(t)
	ctx := context.Background()
	page, err := h.Clusters(ctx, "org/cp", "dev", "", "", 2)
	require.NoError(t, err)
	require.Equal(t, shaNew, page.DesiredCommit)
	require.Len(t, page.Clusters, 2)
	require.Equal(t, "c1", page.Next)
	c0 := page.Clusters[0]
	require.Equal(t, "c0", c0.Name)
	require.Equal(t, "m2", c0.MainCommit)
	require.Equal(t, map[string]string{"podinfo": "w2"}, c0.Workloads)
	require.False(t, c0.Behind)
	page, err = h.Clusters(ctx, "org/cp", "dev", "", page.Next, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"c2", "c3"}, []string{page.Clusters[0].Name, page.Clusters[1].Name})
	require.True(t, page.Clusters[1].Behind)
	require.Equal(t, "m1", page.Clusters[1].MainCommit)
	detail, err := h.Cluster(ctx, "org/cp", "dev", "c4")
	require.NoError(t, err)
	require.Equal(t, store.StateFailure, detail.State)
	require.Len(t, detail.Reports, 1)
	_, err = h.Cluster(ctx, "org/cp", "dev", "nope")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = h.Clusters(ctx, "org/cp", "prod", "", "", 10)
	require.ErrorIs(t, err, ErrNotFound)
}

func TestDriftAndSummaries(t *testing.T) {
	h, _, now := queryHub(t)
	ctx := context.Background()
	d, err := h.Drift(ctx, "org/cp", "dev")
	require.NoError(t, err)
	require.Equal(t, 2, d.BehindCount)
	require.Equal(t, "c3", d.Behind[0].Cluster)
	require.Equal(t, int64(3600), d.Behind[0].BehindSeconds, "behind since the desired commit was made")
	require.Equal(t, now.Add(-time.Hour), d.DesiredSince)
	envs, err := h.Environments(ctx, func(string) bool { return true })
	require.NoError(t, err)
	require.Equal(t, EnvironmentSummary{ControlPlane: "org/cp", Environment: "dev", GitOpsRepo: "org/gitops", GitOpsBranch: "dev",
		DesiredCommit: shaNew, Registered: 5, Compliant: 3, Failed: 1, Behind: 2}, envs[0])
	none, err := h.Environments(ctx, func(string) bool { return false })
	require.NoError(t, err)
	require.Empty(t, none, "only readable control planes")
}

func TestWorkloadsCompareHistoryAndDORA(t *testing.T) {
	h, st, now := queryHub(t)
	ctx := context.Background()
	w, err := h.Workloads(ctx, "org/cp")
	require.NoError(t, err)
	require.Len(t, w, 1)
	dev := w[0].Placements[0]
	require.Equal(t, Placement{Environment: "dev", ClusterTypes: []string{"large", "small"}, Desired: "w2",
		Versions: map[string]int{"w1": 2, "w2": 3}, Healthy: 4, Failed: 1}, dev)

	c, err := h.Compare(ctx, "org/cp", "dev", "stage")
	require.NoError(t, err)
	require.Equal(t, []AssignmentDiff{
		{Key: "large/podinfo-dev", Workload: "podinfo", In: "both", Config: []ConfigDiff{{Key: "REGION", From: "west", To: "east"}}},
		{Key: "large/podinfo-stage", Workload: "podinfo", In: "to"},
		{Key: "small/podinfo-dev", Workload: "podinfo", In: "from"},
	}, c.Differences)

	record := func(main, workload, state string, started, finished time.Duration) {
		id, err := st.StartDeployment(ctx, store.Deployment{ControlPlane: "org/cp", Environment: "dev", MainCommit: main, GitOpsCommit: "g" + main,
			Sources: []store.Source{{Name: "workload podinfo-reg", Commit: workload}}, CommittedAt: now.Add(started - time.Hour), StartedAt: now.Add(started)})
		require.NoError(t, err)
		require.NoError(t, st.FinishDeployment(ctx, id, state, state+" verdict", now.Add(finished)))
	}
	record("m1", "w1", "success", -72*time.Hour, -71*time.Hour) // lead 2h
	record("m2", "w1", "failure", -48*time.Hour, -47*time.Hour) // fails
	record("m3", "w2", "success", -24*time.Hour, -23*time.Hour) // restores after 24h, lead 2h
	record("m4", "w2", "success", -2*time.Hour, -1*time.Hour)   // lead 2h
	hist, err := h.History(ctx, "org/cp", "dev", "")
	require.NoError(t, err)
	require.Len(t, hist, 4)
	require.Equal(t, "m4", hist[0].MainCommit)
	require.EqualValues(t, 7200, *hist[0].LeadTimeSeconds)
	byWorkload, err := h.History(ctx, "org/cp", "", "podinfo")
	require.NoError(t, err)
	require.Equal(t, []string{"m3", "m1"}, []string{byWorkload[0].MainCommit, byWorkload[1].MainCommit}, "only the deployments that changed its version")

	k, err := h.DORA(ctx, "org/cp", "dev", 30)
	require.NoError(t, err)
	require.Equal(t, 4, k.Deployments)
	require.InDelta(t, 3.0/30, k.DeploymentsPerDay, 1e-9)
	require.InDelta(t, 7200, *k.LeadTimeSeconds, 1e-9)
	require.InDelta(t, 0.25, *k.ChangeFailureRate, 1e-9)
	require.InDelta(t, 24*3600, *k.TimeToRestoreSeconds, 1e-9)

	reg := metrics.NewRegistry()
	h.UseRegistry(reg)
	require.NoError(t, h.UpdateGauges(ctx))
	var names []string
	reg.Each(func(name string, _ any) { names = append(names, name) })
	joined := strings.Join(names, "\n")
	require.Contains(t, joined, "kalypso_hub_clusters[control_plane:org/cp,environment:dev,state:registered]")
	require.Equal(t, 2.0, reg.Get("kalypso_hub_clusters_behind[control_plane:org/cp,environment:dev]").(metrics.GaugeFloat64).Value())
	require.Equal(t, 0.25, reg.Get("kalypso_hub_change_failure_ratio[control_plane:org/cp,environment:dev]").(metrics.GaugeFloat64).Value())
}
