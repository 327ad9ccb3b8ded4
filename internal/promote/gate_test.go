package promote

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/store"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// fleet builds n clusters of a cluster type, all reporting state on commit.
func fleet(prefix, clusterType string, n int, commit, state string) []store.ClusterState {
	var out []store.ClusterState
	for i := range n {
		out = append(out, store.ClusterState{Name: fmt.Sprintf("%s-%03d", prefix, i), ClusterType: clusterType,
			Objects: []store.ObjectState{{Object: "Kustomization/flux-system/gitops", GitOpsCommit: commit, State: state}}})
	}
	return out
}

// factsOf classifies clusters as the store does (store.GateCounts, store.GateNames), from
// their states: the reference the SQL is checked against in TestGateCountsAgreeWithTheStore.
func factsOf(states []store.ClusterState, commits []string) gateFacts {
	allowed := map[string]bool{}
	for _, c := range commits {
		allowed[c] = true
	}
	byType := map[string]*store.TypeCount{}
	names := map[string][]string{}
	for _, c := range states {
		t := byType[c.ClusterType]
		if t == nil {
			t = &store.TypeCount{ClusterType: c.ClusterType}
			byType[c.ClusterType] = t
		}
		t.Registered++
		v := clusterVerdict(c, allowed)
		switch v {
		case store.StateSuccess:
			t.Compliant++
		case store.StateFailure:
			t.Failed++
		}
		key := map[string]string{store.StateFailure: store.VerdictFailed, store.StatePending: store.VerdictStraggler}[v]
		if key != "" {
			names[key+"/"] = append(names[key+"/"], c.Name)
			names[key+"/"+c.ClusterType] = append(names[key+"/"+c.ClusterType], c.Name)
		}
	}
	var f gateFacts
	for _, ct := range slices.Sorted(maps.Keys(byType)) {
		f.counts = append(f.counts, *byType[ct])
	}
	f.names = func(verdict, clusterType string) []string {
		list := slices.Sorted(slices.Values(names[verdict+"/"+clusterType]))
		return list[:min(len(list), namesShown)]
	}
	return f
}

// clusterVerdict classifies one cluster: failed when an object failed on an allowed commit,
// compliant when every object succeeded on one, otherwise a straggler (pending).
func clusterVerdict(c store.ClusterState, allowed map[string]bool) string {
	if len(c.Objects) == 0 {
		return store.StatePending
	}
	ok := true
	for _, o := range c.Objects {
		switch {
		case allowed[o.GitOpsCommit] && o.State == store.StateFailure:
			return store.StateFailure
		case !allowed[o.GitOpsCommit] || o.State != store.StateSuccess:
			ok = false
		}
	}
	if ok {
		return store.StateSuccess
	}
	return store.StatePending
}

func stage(minPercent, maxFailed int, types map[string]scheduling.Gate) *scheduling.Stage {
	return &scheduling.Stage{Timeout: 30 * time.Minute, Gate: scheduling.Gate{MinPercent: minPercent, MaxFailed: maxFailed, ClusterTypes: types}}
}

func TestGateVerdictNamesStragglers(t *testing.T) {
	states := append(fleet("a-silent", "large", 10, "old", store.StateSuccess), fleet("b", "large", 290, "merge", store.StateSuccess)...)
	v := gateVerdict(stage(95, 0, nil), time.Minute, factsOf(states, []string{"newer", "merge"}))
	require.True(t, v.final)
	require.True(t, v.success)
	require.Equal(t, "deployed to 290 clusters", v.desc, "the status stays readable by ReadProgress")
	require.Equal(t, "deployed to 290 clusters; 290 of 300 registered clusters compliant (minPercent 95); not compliant: "+
		"a-silent-000, a-silent-001, a-silent-002, a-silent-003, a-silent-004, a-silent-005, a-silent-006, a-silent-007, a-silent-008, a-silent-009",
		v.detail())
	require.Equal(t, Progress{Compliant: 290, Expected: 290}, ReadProgress("success", v.desc))

	v = gateVerdict(stage(100, 0, nil), time.Minute, factsOf(states, []string{"merge"}))
	require.False(t, v.final, "every registered cluster is required by default")
	require.Equal(t, "290/300 clusters compliant", v.desc)
}

func TestGateVerdictFailsBeyondMaxFailed(t *testing.T) {
	states := append(fleet("a", "large", 298, "merge", store.StateSuccess), fleet("z-bad", "small", 2, "merge", store.StateFailure)...)
	v := gateVerdict(stage(95, 1, nil), time.Minute, factsOf(states, []string{"merge"}))
	require.True(t, v.final)
	require.False(t, v.success)
	require.Equal(t, "cluster z-bad-000 failed", v.desc)
	require.Contains(t, v.detail(), "2 failed, more than maxFailed 1: z-bad-000, z-bad-001")
	require.Equal(t, "z-bad-000", ReadProgress("failure", v.desc).FailedCluster)

	v = gateVerdict(stage(95, 2, nil), time.Minute, factsOf(states, []string{"merge"}))
	require.True(t, v.success, "within maxFailed")
	require.Contains(t, v.detail(), "failed (within maxFailed): z-bad-000, z-bad-001")
}

func TestGateVerdictFailureOnAnOlderCommitIsAStraggler(t *testing.T) {
	states := append(fleet("a", "large", 3, "merge", store.StateSuccess), fleet("b", "large", 1, "old", store.StateFailure)...)
	v := gateVerdict(stage(100, 0, nil), time.Minute, factsOf(states, []string{"merge"}))
	require.False(t, v.final)
	require.Equal(t, "3/4 clusters compliant", v.desc)
	v = gateVerdict(stage(100, 0, nil), 31*time.Minute, factsOf(states, []string{"merge"}))
	require.True(t, v.final)
	require.Equal(t, "timed out after 30m0s: 3/4 clusters compliant (missing b-000)", v.desc)
}

func TestGateVerdictPerClusterType(t *testing.T) {
	states := append(fleet("l", "large", 10, "merge", store.StateSuccess), fleet("s", "small", 10, "old", store.StateSuccess)...)
	states = append(states, fleet("s2", "small", 10, "merge", store.StateSuccess)...)
	types := map[string]scheduling.Gate{"small": {MinPercent: 60}}
	v := gateVerdict(stage(50, 0, types), time.Minute, factsOf(states, []string{"merge"}))
	require.False(t, v.final, "20 of 30 is enough overall, 10 of 20 small clusters are not")
	types["small"] = scheduling.Gate{MinPercent: 50}
	v = gateVerdict(stage(50, 0, types), time.Minute, factsOf(states, []string{"merge"}))
	require.True(t, v.success)
	failing := append(states, fleet("x", "large", 1, "merge", store.StateFailure)...)
	v = gateVerdict(stage(50, 5, map[string]scheduling.Gate{"large": {MinPercent: 0, MaxFailed: 0}}), time.Minute, factsOf(failing, []string{"merge"}))
	require.False(t, v.success)
	require.Contains(t, v.detail(), "cluster type large: 1 failed, more than maxFailed 0: x-000")
}

func TestGateVerdictCountsEveryObjectOfACluster(t *testing.T) {
	c := store.ClusterState{Name: "c", ClusterType: "large", Objects: []store.ObjectState{
		{Object: "Application/a", GitOpsCommit: "merge", State: store.StateSuccess},
		{Object: "Application/b", GitOpsCommit: "merge", State: store.StatePending},
	}}
	require.Equal(t, store.StatePending, clusterVerdict(c, map[string]bool{"merge": true}))
	c.Objects[1].State = store.StateFailure
	require.Equal(t, store.StateFailure, clusterVerdict(c, map[string]bool{"merge": true}))
	require.Equal(t, store.StatePending, clusterVerdict(store.ClusterState{Name: "silent"}, nil))
	require.Equal(t, "a, b", listed([]string{"a", "b"}, 2))
	require.Equal(t, "a, b and 11 more", listed([]string{"a", "b"}, 13))
}

// TestGateCountsAgreeWithTheStore checks the store's classification in SQL against factsOf
// on clusters with every mix of objects, commits and states.
func TestGateCountsAgreeWithTheStore(t *testing.T) {
	st, err := store.Open(context.Background(), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	var batch []store.Report
	states := map[string]*store.ClusterState{}
	for i := range 400 {
		name := fmt.Sprintf("c-%03d", i)
		ct := []string{"large", "small", "edge"}[rng.IntN(3)]
		cs := &store.ClusterState{Name: name, ClusterType: ct}
		for o := range 1 + rng.IntN(3) {
			commit := []string{"merge", "later", "old"}[rng.IntN(3)]
			state := []string{store.StateSuccess, store.StateFailure, store.StatePending}[rng.IntN(3)]
			object := fmt.Sprintf("Application/app-%d", o)
			batch = append(batch, store.Report{ControlPlane: "org/cp", Environment: "dev", ClusterType: ct, Cluster: name, Object: object,
				Source: "argocd", GitOpsCommit: commit, State: state, EventAt: now, ReceivedAt: now})
			cs.Objects = append(cs.Objects, store.ObjectState{Object: object, GitOpsCommit: commit, State: state})
		}
		states[name] = cs
	}
	_, err = st.Ingest(context.Background(), batch, store.IngestOptions{})
	require.NoError(t, err)
	var list []store.ClusterState
	for _, n := range slices.Sorted(maps.Keys(states)) {
		list = append(list, *states[n])
	}
	allowed := []string{"later", "merge"}
	want := factsOf(list, allowed)
	got, err := st.GateCounts(context.Background(), "org/cp", "dev", allowed)
	require.NoError(t, err)
	require.Equal(t, want.counts, got)
	for _, v := range []string{store.VerdictFailed, store.VerdictStraggler} {
		for _, ct := range []string{"", "edge"} {
			names, err := st.GateNames(context.Background(), "org/cp", "dev", allowed, v, ct, namesShown)
			require.NoError(t, err)
			require.Equal(t, want.names(v, ct), names, v+" "+ct)
		}
	}
}
