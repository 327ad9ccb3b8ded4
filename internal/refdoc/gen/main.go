// Command gen writes docs/reference.md from the Go types of package scheduling; `go generate
// ./scheduling` (make docs) runs it. It fails, naming each, when a field lacks its doc comment,
// its example or (optional fields) its default.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kalypso-gitops/kalypso/internal/refdoc"
)

func main() {
	src := flag.String("src", ".", "folder of package scheduling")
	out := flag.String("out", "../docs/reference.md", "file to write")
	flag.Parse()
	ref, err := refdoc.Generate(*src)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, p := range ref.Problems {
		fmt.Fprintln(os.Stderr, "undocumented:", p)
	}
	if len(ref.Problems) > 0 {
		os.Exit(1)
	}
	if err := os.WriteFile(*out, ref.Markdown, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
