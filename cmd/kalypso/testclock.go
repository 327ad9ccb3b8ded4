package main

import (
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/kalypso-gitops/kalypso/config"
)

// testClockVariable names a file whose content (an RFC 3339 time) is the time the promoter
// reads: promotion windows, soak times and timeouts are then judged at that time. It is for
// end-to-end tests only, so it is not a setting: it is honoured only when the GitHub API is
// reached on a loopback address (a simulator), never against GitHub. A file that cannot be
// read or parsed gives the real time.
const testClockVariable = "KALYPSO_TEST_CLOCK_FILE"

// testClock returns the promoter's clock read from the file testClockVariable names, or nil
// when the variable is unset or GitHub is not a simulator on a loopback address.
func testClock(cfg *config.Config, getenv func(string) string) func() time.Time {
	file := getenv(testClockVariable)
	if file == "" || !loopback(cfg.GitHub.V3APIURL) {
		return nil
	}
	return func() time.Time {
		data, err := os.ReadFile(file)
		if err != nil {
			return time.Now()
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(data)))
		if err != nil {
			return time.Now()
		}
		return t
	}
}

// loopback reports whether a URL's host is a loopback address.
func loopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}
