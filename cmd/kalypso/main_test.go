package main

import (
	"context"
	"os"
	"testing"
)

// runMainVar makes the test binary act as the kalypso binary, for tests that need a process
// of their own (for example to trust a test certificate through SSL_CERT_FILE).
const runMainVar = "KALYPSO_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainVar) == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
