// Command kalypso schedules workloads onto cluster types and renders their GitOps manifests.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand of the binary.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() map[string]command {
	return map[string]command{
		"render":     {"write an environment's GitOps tree into a folder", runRender},
		"validate":   {"check a control plane and report every error", runValidate},
		"plan":       {"show what would be added, changed and removed in the GitOps tree", runPlan},
		"bench":      {"measure scheduling and rendering on a synthetic fleet", runBench},
		"demo":       {"run Kalypso on the built-in sample control plane", runDemo},
		"serve":      {"run the GitHub App", runServe},
		"audit":      {"verify the hub's audit trail (audit verify)", runAudit},
		"rollback":   {"roll an environment back and hold it, or release it, through a running app", runRollback},
		"override":   {"promote into an environment despite its windows, with a reason, through a running app", runOverride},
		"version":    {"print the version, commit and build date", runVersion},
		"completion": {"print a shell completion script (bash, zsh or fish)", runCompletion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout, cmds)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		return runVersion(ctx, args[1:], stdout, stderr)
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "kalypso: unknown command %q\n\n", args[0])
		usage(stderr, cmds)
		return 2
	}
	return cmd.run(ctx, args[1:], stdout, stderr)
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "Usage: kalypso <command> [flags]")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'kalypso <command> --help' for the flags of a command, 'kalypso --version' for the version.")
}

// newFlagSet makes a flag set whose errors name the flag and whose help shows the description.
func newFlagSet(name, synopsis, description string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: kalypso %s %s\n\n%s\n\nFlags:\n", name, synopsis, description)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args; it returns the exit status to use when the command must stop.
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0, false
	case err != nil:
		return 2, false
	case fs.NArg() > 0:
		fmt.Fprintf(fs.Output(), "kalypso %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return 2, false
	}
	return 0, true
}
