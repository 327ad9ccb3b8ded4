// Package freeport picks a free TCP port of 127.0.0.1 for a process a test starts.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Addr returns a free address of 127.0.0.1 for another process to listen on. Its port is
// taken below the kernel's range of ephemeral ports: a port from that range, free when it is
// checked, can be given to an outgoing connection before the process binds it ("address
// already in use"), which cannot happen below it.
func Addr() (string, error) {
	low := ephemeralLow()
	for range 200 {
		port := 10000 + rand.IntN(low-10000)
		if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			return ln.Addr().String(), ln.Close()
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Port is Addr's port.
func Port() (int, error) {
	addr, err := Addr()
	if err != nil {
		return 0, err
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(port)
}

// ephemeralLow is the lowest port the kernel gives outgoing connections (Linux's
// ip_local_port_range; 32768 where it cannot be read).
func ephemeralLow() int {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 11000 {
				low = n
			}
		}
	}
	return low
}
