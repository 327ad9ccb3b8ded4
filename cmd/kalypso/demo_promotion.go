package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// demoCluster is the commit-status context a dev cluster's Flux posts on the GitOps repository.
const demoCluster = "kustomization/flux-system/dev-large-1"

// demoEnvironment is an Environment of the sample with a promotion and, optionally, a guard.
func demoEnvironment(name, promotion, guard string) string {
	doc := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata:\n  name: " + name + "\nspec:\n" +
		"  controlPlane:\n    repo: https://github.com/microsoft/kalypso-control-plane\n    branch: " + name + "\n    path: .\n" +
		"  promotion:\n" + promotion
	if guard != "" {
		doc += "  guard:\n" + guard
	}
	return doc
}

// promotionAct declares a promotion chain on main (dev automatic, stage after dev with manual
// approval; dev also gets a blast-radius guard, used by the next act), merges dev's pull
// request, has a dev cluster report, and clicks Promote for stage.
func (w *demoWorld) promotionAct(ctx context.Context) error {
	fmt.Fprintln(w.out, "\n1. The platform team declares the promotion chain on main: dev first (one cluster must report),")
	fmt.Fprintln(w.out, "   then stage after dev with a manual approval; dev also gets a blast-radius guard (maxRemoved: 50%).")
	dev := demoEnvironment("dev", "    timeout: 5m\n    compliance:\n      minClusters: 1\n", "    maxRemoved: 50%\n")
	stage := demoEnvironment("stage", "    after: dev\n    approval: manual\n", "")
	sha, err := w.sim.CommitFiles(sample.Owner, sample.ControlPlane, "main",
		map[string]*string{".environments/dev.yaml": &dev, ".environments/stage.yaml": &stage}, "Promote dev, then stage")
	if err != nil {
		return err
	}
	w.mainSHA = sha
	if err := w.waitStatus(ctx, "dev", sha, "pending", "waiting for the GitOps pull request"); err != nil {
		return err
	}
	fmt.Fprintf(w.out, "  main %s is valid in every environment: the app pins it into dev's base-repo.yaml.\n", short(sha))
	w.showStatus("dev", sha)
	pr, err := w.waitProposed(ctx, "dev", sha)
	if err != nil {
		return err
	}
	fmt.Fprintf(w.out, "  pull request #%d (%s) now proposes main %s, labelled %s.\n", pr.GetNumber(), pr.GetHead().GetRef(), short(sha), labels(pr))

	fmt.Fprintf(w.out, "\n2. %s merges dev's pull request #%d\n", demoUser, pr.GetNumber())
	merge, err := w.sim.MergePR(sample.Owner, sample.GitOpsRepo, pr.GetNumber(), demoUser)
	if err != nil {
		return err
	}
	if err := w.waitStatus(ctx, "dev", sha, "pending", "0/1 clusters compliant"); err != nil {
		return err
	}
	w.showStatus("dev", sha)

	fmt.Fprintf(w.out, "\n3. A dev cluster's Flux reports success on the merge commit %s (status %q)\n", short(merge), demoCluster)
	if err := w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "success", demoCluster, "Reconciliation finished"); err != nil {
		return err
	}
	if err := w.waitStatus(ctx, "dev", sha, "success", "deployed to 1 cluster"); err != nil {
		return err
	}
	w.showStatus("dev", sha)
	w.showDeployments("dev")
	return w.promoteToStage(ctx, sha)
}

// promoteToStage shows the approval check run and clicks its Promote button: stage is pinned.
func (w *demoWorld) promoteToStage(ctx context.Context, sha string) error {
	var run *github.CheckRun
	if err := poll(ctx, func() bool { run = w.checkRun(sha, "Promote to stage"); return run != nil && len(w.buttons(run)) > 0 },
		"the Promote button on "+short(sha)); err != nil {
		return err
	}
	fmt.Fprintf(w.out, "  check run %q on main %s: %s, with the buttons %v\n", run.GetName(), short(sha), run.GetOutput().GetTitle(), w.buttons(run))

	fmt.Fprintf(w.out, "\n4. %s clicks Promote\n", demoUser)
	if err := w.sim.ClickCheckRunAction(run.GetID(), promote.PromoteAction, demoUser); err != nil {
		return err
	}
	if err := w.waitStatus(ctx, "stage", sha, "pending", "waiting for the GitOps pull request"); err != nil {
		return err
	}
	if err := poll(ctx, func() bool {
		run = w.checkRun(sha, "Promote to stage")
		return strings.HasPrefix(run.GetOutput().GetTitle(), "Promoted by")
	}, "the Promote check run to record the click"); err != nil {
		return err
	}
	fmt.Fprintf(w.out, "  check run %q: %s; buttons left: %d\n", run.GetName(), run.GetOutput().GetTitle(), len(w.buttons(run)))
	fmt.Fprintf(w.out, "  stage's base-repo.yaml now pins main %s; the commit message names who promoted it:\n", short(sha))
	msg, err := w.headMessage(sample.ControlPlane, "stage")
	if err != nil {
		return err
	}
	fmt.Fprintf(w.out, "      %s\n", strings.SplitN(msg, "\n", 2)[0])
	w.showStatus("stage", sha)
	pr, err := w.waitProposed(ctx, "stage", sha)
	if err != nil {
		return err
	}
	fmt.Fprintf(w.out, "  pull request #%d (%s) proposes it to stage, labelled %s; merging it starts stage's wait for its clusters.\n",
		pr.GetNumber(), pr.GetHead().GetRef(), labels(pr))
	return nil
}

// waitProposed waits until the app's pull request of env proposes main commit sha, labelled
// promoted, and returns it.
func (w *demoWorld) waitProposed(ctx context.Context, env, sha string) (*github.PullRequest, error) {
	var pr *github.PullRequest
	err := poll(ctx, func() bool {
		pr = w.appPR(env)
		return pr != nil && w.prTree(env)[".github/tracking/Promoted_Commit_Id"] == sha && labels(pr) == "promoted"
	}, env+"'s pull request proposing "+short(sha))
	return pr, err
}

// mainStatus is the latest kalypso/<env> status of a main commit, or nil.
func (w *demoWorld) mainStatus(env, sha string) *github.RepoStatus {
	for _, st := range w.sim.Statuses(sample.Owner, sample.ControlPlane, sha) {
		if st.GetContext() == "kalypso/"+env {
			return st
		}
	}
	return nil
}

func (w *demoWorld) waitStatus(ctx context.Context, env, sha, state, desc string) error {
	return poll(ctx, func() bool {
		st := w.mainStatus(env, sha)
		return st != nil && st.GetState() == state && strings.Contains(st.GetDescription(), desc)
	}, fmt.Sprintf("status kalypso/%s %s %q on %s", env, state, desc, short(sha)))
}

func (w *demoWorld) showStatus(env, sha string) {
	if st := w.mainStatus(env, sha); st != nil {
		fmt.Fprintf(w.out, "  status %s on main %s: %s — %s\n", st.GetContext(), short(sha), st.GetState(), st.GetDescription())
	}
}

// showDeployments prints the GitHub Deployments of an environment with their latest state.
func (w *demoWorld) showDeployments(env string) {
	for _, d := range w.sim.Deployments(sample.Owner, sample.ControlPlane) {
		if d.GetEnvironment() == env {
			fmt.Fprintf(w.out, "  GitHub Deployment of %s to %s: %s\n", short(d.GetSHA()), env, d.GetDescription())
		}
	}
}

// checkRun is the check run of that name on a control-plane commit, or nil.
func (w *demoWorld) checkRun(sha, name string) *github.CheckRun {
	for _, r := range w.sim.CheckRuns(sample.Owner, sample.ControlPlane, sha) {
		if r.GetName() == name {
			return r
		}
	}
	return nil
}

// buttons are the labels of the actions a check run offers.
func (w *demoWorld) buttons(run *github.CheckRun) []string {
	_, actions, err := w.sim.CheckRunDetails(run.GetID())
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range actions {
		out = append(out, a.Label)
	}
	return out
}

// headMessage is the message of a branch's head commit.
func (w *demoWorld) headMessage(repo, branch string) (string, error) {
	head, err := w.sim.BranchSHA(sample.Owner, repo, branch)
	if err != nil {
		return "", err
	}
	token, err := w.sim.InstallationToken(w.seeded.Installation)
	if err != nil {
		return "", err
	}
	gh, err := github.NewClient(nil).WithAuthToken(token).WithEnterpriseURLs(w.sim.APIURL(), w.sim.UploadURL())
	if err != nil {
		return "", err
	}
	commit, _, err := gh.Git.GetCommit(context.Background(), sample.Owner, repo, head)
	if err != nil {
		return "", err
	}
	return commit.GetMessage(), nil
}

// labels lists a pull request's labels.
func labels(pr *github.PullRequest) string {
	var names []string
	for _, l := range pr.Labels {
		names = append(names, l.GetName())
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}
