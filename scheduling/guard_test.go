package scheduling

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

func guardEnvs(t *testing.T, guard string) ([]*Environment, Errors) {
	t.Helper()
	doc := env("dev", "") + "  guard:\n" + guard
	return LoadEnvironments(Source{FS: fstest.MapFS{".environments/dev.yaml": &fstest.MapFile{Data: []byte(doc)}}, Prefix: "main/"})
}

func TestGuardDecodesNumbersAndPercentages(t *testing.T) {
	envs, errs := guardEnvs(t, "    maxRemoved: 10%\n    maxChanged: \"50%\"\n    maxClusterTypes: 20\n")
	require.Empty(t, errs)
	l := GuardOf(envs, "dev")
	require.Equal(t, &Limit{Value: 10, Percent: true}, l.Removed)
	require.Equal(t, &Limit{Value: 50, Percent: true}, l.Changed)
	require.Equal(t, &Limit{Value: 20}, l.ClusterTypes)
	require.Nil(t, l.Added)
	require.False(t, l.Empty())
	require.Nil(t, GuardOf(envs, "prod"))
}

func TestGuardErrorsAtTheirLine(t *testing.T) {
	envs, errs := guardEnvs(t, "    maxRemoved: 10\n    maxChanged: 150%\n    maxAdded: -1\n")
	require.Len(t, errs, 2)
	require.Equal(t, "main/.environments/dev.yaml:9: Environment \"dev\": spec.guard.maxChanged: \"150%\" is neither a whole number nor a percentage from 0% to 100%", errs[0].Error())
	require.Contains(t, errs[1].Error(), ":10: ")
	l := GuardOf(envs, "dev")
	require.Equal(t, &Limit{}, l.Changed, "a broken limit fails closed")

	_, errs = guardEnvs(t, "    maxRemoved: [1]\n")
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Error(), ":8: ")
	_, errs = guardEnvs(t, "    maxDeleted: 1\n")
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Error(), "maxDeleted")
}

func TestLimitArithmetic(t *testing.T) {
	for _, c := range []struct {
		limit           string
		measured, total int
		allows          bool
	}{
		{"10%", 10, 100, true},
		{"10%", 11, 100, false},
		{"10%", 1, 9, false}, // 11.1%
		{"10%", 1, 10, true},
		{"10%", 0, 0, true},
		{"0%", 1, 1000, false},
		{"100%", 7, 7, true},
		{"20", 20, 10000, true},
		{"20", 21, 10000, false},
		{"0", 0, 5, true},
	} {
		l, ok := ParseQuantity(c.limit)
		require.True(t, ok, c.limit)
		require.Equal(t, c.allows, l.Allows(c.measured, c.total), "%s: %d of %d", c.limit, c.measured, c.total)
		require.Equal(t, c.limit, l.String())
	}
	for _, bad := range []string{"", "%", "1.5", "+3", "101%", "ten", " 5"} {
		_, ok := ParseQuantity(bad)
		require.False(t, ok, bad)
	}
}
