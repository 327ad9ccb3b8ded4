package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/kalypso-gitops/kalypso/internal/sample"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

func runDemo(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", "",
		"Runs Kalypso on its built-in sample control plane (the public Kalypso sample, main HEAD promoted to\n"+
			"dev and stage): schedules each environment, shows what would change in its GitOps branch as last\n"+
			"merged, and prints the manifests of the first assignment. Needs no network and no account.", stderr)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	for _, env := range sample.Environments() {
		if err := demoEnvironment(env, stdout); err != nil {
			fmt.Fprintf(stderr, "kalypso demo: %v\n", err)
			return 1
		}
	}
	return 0
}

func demoEnvironment(env string, w io.Writer) error {
	snap := scheduling.Load(scheduling.Inputs{
		Environment: env,
		Env:         scheduling.Source{FS: sample.FS(env), Name: env, Prefix: env + ":"},
		Main:        scheduling.Source{FS: sample.FS("main"), Name: "main", Prefix: "main@" + sample.MainHead[:7] + ":"},
		Workloads:   scheduling.TreeWorkloads(sample.FS("workload-sources"), "workloads:"),
	})
	res := render.Environment(snap)
	prev, err := fsTree(sample.FS("gitops/" + env))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "== environment %s: %d cluster types, %d deployment targets, %d assignments, %d errors\n",
		env, len(snap.ClusterTypes), len(snap.Targets), len(res.Assignments), len(res.Errors))
	for _, e := range res.Errors {
		fmt.Fprintf(w, "   %s\n", e)
	}
	for _, a := range res.Assignments {
		fmt.Fprintf(w, "   assignment %s (policies: %v, namespace %s)\n", a.Key(), a.Policies, a.Namespace())
	}
	fmt.Fprintf(w, "-- pull request for GitOps branch %s:\n", env)
	fmt.Fprint(w, indent(render.Diff(prev, res.Apply(prev), res.Root).Text()))
	if len(res.Assignments) > 0 {
		key := res.Assignments[0].Key()
		files := res.Outputs[key]
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "-- %s/%s\n%s\n", key, n, files[n])
		}
	}
	return nil
}

func fsTree(fsys fs.FS) (render.Tree, error) {
	tree := render.Tree{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		tree[p] = data
		return err
	})
	return tree, err
}

func indent(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("   " + line + "\n")
	}
	return b.String()
}
