package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBenchJSONOnATinyFleet(t *testing.T) {
	code, stdout, stderr := runCLI(t, "bench", "--cluster-types", "3", "--workloads", "4", "--targets-per-workload", "2",
		"--configs", "5", "--policies", "4", "--runs", "2", "--json")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)

	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	for _, field := range []string{"assignments", "full_seconds", "peak_rss_bytes", "load_seconds", "schedule_seconds",
		"render_seconds", "allocs", "alloc_bytes", "cluster_types", "deployment_targets", "gomaxprocs"} {
		require.Contains(t, got, field)
	}
	require.EqualValues(t, 3, got["cluster_types"])
	require.EqualValues(t, 8, got["deployment_targets"])
	require.EqualValues(t, 24, got["assignments"])
	require.Equal(t, got["cluster_types"].(float64)*got["deployment_targets"].(float64), got["assignments"])
	require.Positive(t, got["full_seconds"])
	require.Positive(t, got["peak_rss_bytes"])
	require.Positive(t, got["allocs"])
	require.Positive(t, got["gomaxprocs"])
	require.Positive(t, got["cache_heap_bytes"])

	inc, ok := got["incremental"].([]any)
	require.True(t, ok, "incremental is a list")
	require.Len(t, inc, 5)
	var changes []string
	for _, item := range inc {
		c := item.(map[string]any)
		for _, field := range []string{"change", "seconds", "assignments_rendered", "ratio"} {
			require.Contains(t, c, field)
		}
		require.Positive(t, c["seconds"])
		require.Positive(t, c["ratio"])
		changes = append(changes, c["change"].(string))
	}
	require.Equal(t, []string{"platform config of one cluster type", "one workload edit", "template used by 10% of cluster types",
		"policy stops selecting one workload", "policy selects it again"}, changes)
	rendered := func(i int) any { return inc[i].(map[string]any)["assignments_rendered"] }
	require.EqualValues(t, 8, rendered(0), "cluster type 0 × 8 targets")
	require.EqualValues(t, 6, rendered(1), "3 cluster types × the workload's 2 targets")
	require.EqualValues(t, 8, rendered(2), "the canary is on cluster type 0")
	require.EqualValues(t, 0, rendered(3), "assignments are only removed")
	require.EqualValues(t, 4, inc[3].(map[string]any)["assignments_removed"])
	require.EqualValues(t, 4, rendered(4))

	e2e, ok := got["end_to_end"].(map[string]any)
	require.True(t, ok, "end_to_end is an object")
	require.Positive(t, e2e["full_seconds"])
	require.Positive(t, e2e["full_load_seconds"])
	require.GreaterOrEqual(t, e2e["full_cpu_seconds"], 0.0, "CPU time may be below the clock's resolution on a tiny fleet")
	e2eChanges, ok := e2e["changes"].([]any)
	require.True(t, ok, "end_to_end.changes is a list")
	var names []string
	for _, item := range e2eChanges {
		c := item.(map[string]any)
		for _, field := range []string{"seconds", "load_seconds", "render_seconds", "ratio"} {
			require.Positive(t, c[field], "%s of %s", field, c["change"])
		}
		require.InDelta(t, c["seconds"].(float64)/e2e["full_seconds"].(float64), c["ratio"], 1e-9)
		require.InDelta(t, c["cpu_seconds"].(float64)/max(e2e["full_cpu_seconds"].(float64), 1e-9), c["cpu_ratio"], 1e-9)
		names = append(names, c["change"].(string))
	}
	require.Equal(t, changes, names, "the same changes, end to end")
}

func TestBenchTextAndBadFlags(t *testing.T) {
	code, stdout, stderr := runCLI(t, "bench", "--cluster-types", "2", "--workloads", "1", "--targets-per-workload", "1", "--runs", "1")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "assignments:  2 (")
	require.Contains(t, stdout, "peak RSS:")
	require.Contains(t, stdout, "incremental (from the previous result")
	require.Contains(t, stdout, "one workload edit")
	require.Contains(t, stdout, "kept heap:")
	require.Contains(t, stdout, "end to end (sources in go-git memory storage")

	code, stdout, stderr = runCLI(t, "bench", "--cluster-types", "2", "--workloads", "1", "--targets-per-workload", "1", "--runs", "1", "--end-to-end=false")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "kept heap:")
	require.NotContains(t, stdout, "end to end")

	code, _, stderr = runCLI(t, "bench", "--runs", "0")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--runs")
	code, _, stderr = runCLI(t, "bench", "--workloads", "-1")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--workloads")
}
