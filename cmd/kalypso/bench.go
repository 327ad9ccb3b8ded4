package main

import (
	"context"
	"fmt"
	"io"
)

func runBench(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "kalypso bench: not built yet")
	return 1
}
