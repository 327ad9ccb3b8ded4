package githubsim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCappedKeepsTheNewestEntries checks that a capped map keeps at most its bound, drops the
// oldest first, and that a key put again keeps its place and takes the new value.
func TestCappedKeepsTheNewestEntries(t *testing.T) {
	c := newCapped[int, string](3)
	for i := range 10 {
		c.put(i, "v")
		require.LessOrEqual(t, c.len(), 3)
	}
	for i := range 7 {
		_, ok := c.get(i)
		require.False(t, ok, "%d was dropped", i)
	}
	c.put(7, "again")
	c.put(10, "v")
	_, ok := c.get(7)
	require.False(t, ok, "7 kept its place: the oldest, dropped first")
	for _, k := range []int{8, 9, 10} {
		_, ok := c.get(k)
		require.True(t, ok, "%d is among the newest", k)
	}
	c.put(9, "new")
	v, _ := c.get(9)
	require.Equal(t, "new", v)
	for i := range 1000 {
		c.put(100+i, "v")
	}
	require.Equal(t, 3, c.len())
	require.LessOrEqual(t, cap(c.order), 4*3+1, "the dropped keys' array is let go")
}
