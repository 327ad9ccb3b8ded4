package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/plural"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

const inputSynopsis = "(--main-dir DIR --env-dir DIR [--workloads-dir DIR] [--environment NAME] | --repo PATH --environment NAME [--workloads-dir DIR] [--github-url URL])"

func runRender(_ context.Context, args []string, stdout, stderr io.Writer) int {
	var in inputFlags
	var out string
	fs := newFlagSet("render", inputSynopsis+" --out DIR",
		"Schedules one environment and writes its complete GitOps tree into --out: a README per cluster type,\n"+
			"the reconciler, namespace and platform-config manifests of every assignment, and the promoted commit.\n"+
			"Kalypso owns only the cluster-type folders below the GitOps path (those of the environment's cluster\n"+
			"types, and former ones, recognised by the README.md Kalypso writes): what they hold that the environment\n"+
			"no longer produces is removed, each removed path printed. Everything else in --out (files at the top of\n"+
			"the GitOps path, dot-folders, any other folder) is left alone, apart from .github/tracking/Promoted_Commit_Id.\n"+
			"An assignment that fails keeps what --out already had for it. Symbolic links in --out are not followed.\n"+
			"Every error is printed as file:line: message; the exit status is 1 if there was any.", stderr)
	in.register(fs)
	fs.StringVar(&out, "out", "", "directory to write the GitOps tree into (created if missing; required)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if out == "" {
		fmt.Fprintln(stderr, "kalypso render: flag --out is required")
		return 2
	}
	res, code := renderInputs(&in, stderr)
	if res == nil {
		return code
	}
	prev, err := readOutTree(out)
	if err != nil {
		fmt.Fprintf(stderr, "kalypso render: flag --out: %v\n", err)
		return 2
	}
	written, removed, err := writeTree(out, prev, res.Desired(prev), stdout)
	if err != nil {
		fmt.Fprintf(stderr, "kalypso render: %v\n", err)
		return 1
	}
	printErrors(stderr, res.Errors)
	fmt.Fprintf(stdout, "environment %s: %s rendered, %d failed; %s written, %d removed in %s\n",
		res.Snapshot.Environment, plural.Count(res.Outputs.Len(), "assignment"), len(res.Failed), plural.Count(written, "file"), removed, out)
	return exitStatus(res.Errors)
}

func runValidate(_ context.Context, args []string, stdout, stderr io.Writer) int {
	var in inputFlags
	fs := newFlagSet("validate", inputSynopsis,
		"Loads, schedules and renders one environment without writing anything, and prints every error as\n"+
			"file:line: message (exit status 1), or a one-line summary when there is none. With --output json, one\n"+
			"JSON object on stdout instead (docs/json-output.md), with the same exit status.", stderr)
	in.register(fs)
	output := outputFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if !checkOutput("validate", *output, stderr) {
		return 2
	}
	res, code := renderInputs(&in, stderr)
	if res == nil {
		return code
	}
	if *output == "json" {
		writeJSON(stdout, newValidateReport(res))
		return exitStatus(res.Errors)
	}
	printErrors(stderr, res.Errors)
	if len(res.Errors) > 0 {
		fmt.Fprintf(stderr, "environment %s: %s\n", res.Snapshot.Environment, plural.Count(len(res.Errors), "error"))
		return 1
	}
	snap := res.Snapshot
	fmt.Fprintf(stdout, "environment %s is valid: %s, %s, %s\n", snap.Environment, plural.Count(len(snap.ClusterTypes), "cluster type"),
		plural.Count(len(snap.Targets), "deployment target"), plural.Count(len(res.Assignments), "assignment"))
	return 0
}

// renderInputs loads and renders the environment; when it cannot, it returns nil and a status:
// 2 for a usage problem, 1 for a problem with the repositories.
func renderInputs(in *inputFlags, stderr io.Writer) (*render.Result, int) {
	snap, errs, err := in.load(stderr)
	if err != nil {
		printErrors(stderr, errs)
		var missing *gitsource.MissingCommitError
		switch {
		case errors.As(err, &missing):
			fmt.Fprintf(stderr, "kalypso: %v\nfetch it with: git -C %s fetch origin %s\n", err, in.repo, missing.Commit)
			return nil, 1
		case errors.Is(err, gitsource.ErrInvalidEnvironment):
			fmt.Fprintf(stderr, "kalypso: %v\n", err)
			return nil, 1
		}
		fmt.Fprintf(stderr, "kalypso: %v\n", err)
		return nil, 2
	}
	warnOtherEnvironments(stderr, snap)
	return render.Environment(snap), 0
}

func printErrors(w io.Writer, errs scheduling.Errors) {
	for _, e := range errs {
		fmt.Fprintln(w, e.Error())
	}
}

func exitStatus(errs scheduling.Errors) int {
	if len(errs) > 0 {
		return 1
	}
	return 0
}
