package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"

	"github.com/go-git/go-git/v5"

	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/internal/preview"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

func runPlan(_ context.Context, args []string, stdout, stderr io.Writer) int {
	var in inputFlags
	var gitops string
	var diff, accept bool
	fs := newFlagSet("plan", inputSynopsis+" --gitops-dir DIR [--diff] [--accept-blast-radius]",
		"Compares the environment's GitOps tree with the current one in --gitops-dir and prints what would be\n"+
			"added, changed and removed, grouped by cluster type and assignment; with --diff, the unified diff of\n"+
			"every assignment's files, whole files. Errors are printed as for render. When the change exceeds a limit\n"+
			"of the Environment's spec.guard, the measured figure is printed against the limit and the exit status\n"+
			"is 1, unless --accept-blast-radius is given. With --output json, one JSON object on stdout instead\n"+
			"(docs/json-output.md), with the same exit status.", stderr)
	in.register(fs)
	fs.StringVar(&gitops, "gitops-dir", "", "existing directory holding the current GitOps tree of the environment (required)")
	fs.BoolVar(&diff, "diff", false, "print the unified diff of every changed assignment, whole files")
	fs.BoolVar(&accept, "accept-blast-radius", false, "do not fail when the change exceeds the environment's spec.guard")
	output := outputFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if !checkOutput("plan", *output, stderr) {
		return 2
	}
	if gitops == "" {
		fmt.Fprintln(stderr, "kalypso plan: flag --gitops-dir is required")
		return 2
	}
	res, code := renderInputs(&in, stderr)
	if res == nil {
		return code
	}
	prev, err := readTree(gitops)
	if err != nil {
		fmt.Fprintf(stderr, "kalypso plan: flag --gitops-dir: %v\n", err)
		return 2
	}
	return reportPlan(&in, res, prev, *output == "json", diff, accept, stdout, stderr)
}

// reportPlan compares the trees, checks the guard and prints the plan as text or JSON; it
// returns the exit status.
func reportPlan(in *inputFlags, res *render.Result, prev render.Tree, asJSON, diff, accept bool, stdout, stderr io.Writer) int {
	next := res.Apply(prev)
	plan := render.Diff(prev, next, res.Root)
	blast := preview.Measure(prev, next, res.Root)
	status := exitStatus(res.Errors)
	violations, err := in.violations(res.Snapshot.Environment, blast)
	if err != nil {
		fmt.Fprintf(stderr, "kalypso plan: reading the guard of environment %s: %v\n", res.Snapshot.Environment, err)
		status = 1
	}
	if len(violations) > 0 && !accept {
		status = 1
	}
	if asJSON {
		writeJSON(stdout, newPlanReport(planInput{res: res, prev: prev, next: next, plan: plan, blast: blast,
			violations: violations, accepted: accept, withDiff: diff}))
		return status
	}
	fmt.Fprint(stdout, plan.Text())
	if diff {
		fmt.Fprint(stdout, preview.Plain(preview.Sections(plan, prev, next, res.Root)))
	}
	printErrors(stderr, res.Errors)
	printViolations(stderr, res.Snapshot.Environment, violations, accept)
	return status
}

// violations returns the limits of the environment's spec.guard that the change exceeds.
func (f *inputFlags) violations(env string, blast preview.Blast) ([]preview.Violation, error) {
	limits, err := f.guard(env)
	if err != nil {
		return nil, err
	}
	return preview.Check(limits, blast), nil
}

// printViolations prints each limit the change exceeds and whether it is accepted.
func printViolations(stderr io.Writer, env string, violations []preview.Violation, accept bool) {
	for _, v := range violations {
		fmt.Fprintf(stderr, "environment %s: blast radius: the change %s\n", env, v)
	}
	switch {
	case len(violations) == 0:
	case accept:
		fmt.Fprintln(stderr, "the blast radius is accepted (--accept-blast-radius)")
	default:
		fmt.Fprintln(stderr, "rerun with --accept-blast-radius to accept it")
	}
}

// guard reads the environment's spec.guard from main (the folder in directory mode, main's
// head in git mode); nil without one. Its errors were reported when the inputs were loaded.
func (f *inputFlags) guard(env string) (*scheduling.Limits, error) {
	var mainFS fs.FS
	if f.repo == "" {
		mainFS = linkFreeDirFS(f.mainDir)
	} else {
		repo, err := git.PlainOpen(f.repo)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", f.repo, err)
		}
		head, err := gitsource.Resolve(repo, gitsource.MainBranch)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", gitsource.MainBranch, err)
		}
		if mainFS, err = gitsource.TreeFS(repo, head); err != nil {
			return nil, fmt.Errorf("read %s: %w", gitsource.MainBranch, err)
		}
	}
	envs, _ := scheduling.LoadEnvironments(scheduling.Source{FS: mainFS})
	return scheduling.GuardOf(envs, env), nil
}
