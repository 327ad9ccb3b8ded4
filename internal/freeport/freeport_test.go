package freeport

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAddrIsFreeAndBelowTheEphemeralRange checks that the address can be listened on and
// that its port is one the kernel does not give outgoing connections.
func TestAddrIsFreeAndBelowTheEphemeralRange(t *testing.T) {
	for range 20 {
		addr, err := Addr()
		require.NoError(t, err)
		host, port, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		require.Equal(t, "127.0.0.1", host)
		n, err := strconv.Atoi(port)
		require.NoError(t, err)
		require.GreaterOrEqual(t, n, 10000)
		require.Less(t, n, ephemeralLow())
		ln, err := net.Listen("tcp", addr)
		require.NoError(t, err, "the address is free")
		require.NoError(t, ln.Close())
	}
	p, err := Port()
	require.NoError(t, err)
	require.Less(t, p, ephemeralLow())
}
