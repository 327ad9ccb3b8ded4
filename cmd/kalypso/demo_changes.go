package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// demoStep is a change a user makes in one commit, and why it matters.
type demoStep struct {
	title, repo, branch, path, content, why string
}

const (
	largeClusterType = "cluster-types/west-us/large/large-cluster-type.yaml"
	largeGood        = "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: large\n  labels:\n    region: west-us\n    size: large\nspec:\n  reconciler: arc-flux\n  namespaceService: default\n  configType: configmap\n"
)

// changeSteps are the commits of the first act.
func changeSteps() []demoStep {
	return []demoStep{
		{"1. A platform engineer changes dev's common config (ENVIRONMENT: Dev → Development)", sample.ControlPlane, "dev",
			"configs/dev-config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dev-config\n  labels:\n     platform-config: \"true\"\ndata:\n  ENVIRONMENT: Development\n  SOME_COMMON_ENVIRONMENT_VARIABLE: \"false\"", ""},
		{"2. The application team moves prometheus to a new manifests folder", sample.WorkloadRepo, "main",
			"workloads/observability.yaml", "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata:\n  name: observability\n  labels:\n    type: service\n    stack: observability\nspec:\n  deploymentTargets:\n    - name: prometheus\n      environment: dev\n      manifests:\n        repo: https://github.com/microsoft/kalypso-svc-gitops\n        branch: dev\n        path: ./prometheus-v2\n", ""},
		{"3. Someone pushes a broken cluster type to dev (a misspelt field)", sample.ControlPlane, "dev",
			largeClusterType, strings.Replace(largeGood, "namespaceService", "namespaceServise", 1),
			"  Why: a broken ClusterType holds back what depends on it. The large cluster type's assignment keeps its\n" +
				"  last merged output, so the changes of steps 1 and 2 to it leave the pull request until the file is\n" +
				"  fixed; the errors are on the commit's check run and listed in the pull request."},
		{"4. The platform engineer fixes the misspelt field", sample.ControlPlane, "dev", largeClusterType, largeGood,
			"  The changes of steps 1 and 2 are proposed again."},
	}
}

// changesAct makes a user's changes one after the other and shows what the app did after each.
func (w *demoWorld) changesAct(ctx context.Context) error {
	if err := w.waitPRs(ctx, 2); err != nil {
		return err
	}
	w.showPRs("After the first resync")
	for _, s := range changeSteps() {
		fmt.Fprintf(w.out, "\n%s\n", s.title)
		before := w.prTree("dev")
		content := s.content
		sha, err := w.sim.CommitFiles(sample.Owner, s.repo, s.branch, map[string]*string{s.path: &content}, s.title)
		if err != nil {
			return err
		}
		runs, err := w.waitChecks(ctx, s.repo, sha)
		if err != nil {
			return err
		}
		w.showChecks(s.repo, sha, runs)
		w.showStepChanges("dev", before, w.prTree("dev"))
		if s.why != "" {
			fmt.Fprintln(w.out, s.why)
		}
		w.showPRs("Pull requests now")
	}
	return nil
}

func (w *demoWorld) waitPRs(ctx context.Context, n int) error {
	return poll(ctx, func() bool { return len(w.appPRs()) >= n }, "the app's pull requests")
}

func (w *demoWorld) waitChecks(ctx context.Context, repo, sha string) ([]*github.CheckRun, error) {
	var runs []*github.CheckRun
	err := poll(ctx, func() bool {
		runs = w.sim.CheckRuns(sample.Owner, repo, sha)
		return len(runs) > 0 && runs[0].GetStatus() == "completed"
	}, "a check run on "+short(sha))
	return runs, err
}

func (w *demoWorld) appPRs() []*github.PullRequest { return sample.AppPullRequests(w.sim) }

// appPR is the app's open pull request of an environment, or nil.
func (w *demoWorld) appPR(env string) *github.PullRequest {
	for _, pr := range w.appPRs() {
		if pr.GetBase().GetRef() == env {
			return pr
		}
	}
	return nil
}

func (w *demoWorld) showPRs(title string) {
	fmt.Fprintf(w.out, "\n%s — open pull requests on %s/%s:\n", title, sample.Owner, sample.GitOpsRepo)
	for _, pr := range w.appPRs() {
		head, _ := w.sim.BranchSHA(sample.Owner, sample.GitOpsRepo, pr.GetHead().GetRef())
		fmt.Fprintf(w.out, "  #%d %s (%s → %s, head %s)\n", pr.GetNumber(), pr.GetTitle(), pr.GetHead().GetRef(), pr.GetBase().GetRef(), short(head))
		for _, line := range strings.Split(pr.GetBody(), "\n") {
			if strings.HasPrefix(line, "|") || strings.Contains(line, " added, ") || strings.HasPrefix(line, "- `") {
				fmt.Fprintf(w.out, "      %s\n", line)
			}
		}
	}
}

func (w *demoWorld) showChecks(repo, sha string, runs []*github.CheckRun) {
	for _, run := range runs {
		fmt.Fprintf(w.out, "  check run %q on %s/%s@%s: %s — %s\n", run.GetName(), sample.Owner, repo, short(sha),
			run.GetConclusion(), run.GetOutput().GetTitle())
		anns, _, err := w.sim.CheckRunDetails(run.GetID())
		if err != nil {
			continue
		}
		for _, a := range anns {
			fmt.Fprintf(w.out, "      %s:%d: %s\n", a.GetPath(), a.GetStartLine(), a.GetMessage())
		}
	}
}
