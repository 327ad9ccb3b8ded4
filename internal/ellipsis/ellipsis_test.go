package ellipsis

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCut(t *testing.T) {
	require.Equal(t, "short", Cut("short", 140))
	require.Equal(t, "abcd…", Cut("abcdefgh", 5))
	require.Equal(t, "ab…", Cut("abéé", 4), "é is two bytes: it is not cut")
	require.Equal(t, "Promote to a-very-long-environment-name…", Cut("Promote to a-very-long-environment-name-indeed", 40))
}
