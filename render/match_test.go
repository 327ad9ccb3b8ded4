package render

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMatchingSplitByClusterType: matching in two steps, the cluster type's part first, selects
// what ConfigSet.Matching selects, in the same order, for random labels of every kind.
func TestMatchingSplitByClusterType(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{LabelClusterType, LabelDeploymentTarget, LabelWorkload, LabelPlatformConfig, LabelFluxName, "region", "size"}
	values := []string{"", "a", "b"}
	labels := func(n int) map[string]string {
		m := map[string]string{}
		for range rng.IntN(n) {
			m[keys[rng.IntN(len(keys))]] = values[rng.IntN(len(values))]
		}
		return m
	}
	selected := 0
	for round := range 2000 {
		var sources []ConfigSource
		for i := range rng.IntN(6) {
			sources = append(sources, ConfigSource{Name: fmt.Sprint("c", i), Labels: labels(4)})
		}
		set := NewConfigSet(sources, nil)
		ctName, dtName := values[rng.IntN(3)], values[rng.IntN(3)]
		ctLabels, dtLabels := labels(3), labels(3)
		want := set.Matching(ctName, ctLabels, dtName, dtLabels)
		got := matchTarget(set.matchForClusterType(ctName, ctLabels), dtName, dtLabels, nil)
		require.Equal(t, want, got, "round %d", round)
		selected += len(want)
	}
	require.Greater(t, selected, 1000, "the rounds select something")
}
