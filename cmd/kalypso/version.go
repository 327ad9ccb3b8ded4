package main

import (
	"context"
	"fmt"
	"io"

	"github.com/kalypso-gitops/kalypso/internal/version"
)

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	var output string
	fs := newFlagSet("version", "[--output text|json]",
		"Prints the version of this binary (what `git describe --tags --always --dirty` said when it was built),\n"+
			"the commit it was built from, the build date and the Go version. `kalypso --version` prints the same.", stderr)
	fs.StringVar(&output, "output", "text", "text, or json: {\"version\", \"commit\", \"date\", \"goVersion\"}")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	info := version.Get()
	switch output {
	case "text":
		fmt.Fprintf(stdout, "kalypso %s\n  commit: %s\n  built:  %s\n  go:     %s\n", info.Version, info.Commit, info.Date, info.GoVersion)
	case "json":
		writeJSON(stdout, info)
	default:
		fmt.Fprintf(stderr, "kalypso version: flag --output: %q is not text or json\n", output)
		return 2
	}
	return 0
}
