package e2e

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// The attacker owns the workload repository only. Pushing an Environment to its main and an
// environment branch naming the platform's GitOps repository does not make it a control
// plane: nothing it says reaches the platform's pull request, and nothing is reported on it.
func TestE2EWorkloadRepositoryCannotBecomeAControlPlane(t *testing.T) {
	w := newWorld(t)
	w.start()
	before := w.head("kalypso/dev")
	require.NotEmpty(t, before)
	rogueEnv := `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata:
  name: dev
spec:
  controlPlane: {repo: https://github.com/microsoft/kalypso-svc-src, branch: dev, path: .}
`
	branch := map[string]*string{
		"gitops-repo.yaml": str(strings.Replace(sampleFile(t, "dev", "gitops-repo.yaml"), "name: dev", "name: rogue", 1)),
		"cluster-types/large.yaml": str(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata:
  name: large
spec: {reconciler: pwn, namespaceService: pwn, configType: pwn}
`),
		"templates/pwn.yaml": str(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata:
  name: pwn
spec:
  type: reconciler
  manifests:
    - |
      apiVersion: rbac.authorization.k8s.io/v1
      kind: ClusterRoleBinding
      metadata: {name: pwn}
      roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
`),
	}
	w.commit(sample.WorkloadRepo, "dev", branch)
	sha := w.commit(sample.WorkloadRepo, "main", map[string]*string{".environments/dev.yaml": str(rogueEnv)})
	w.commit(sample.WorkloadRepo, "dev", map[string]*string{"touch.yaml": str("# again\n")})

	require.Equal(t, before, w.head("kalypso/dev"), "the platform's pull request is unchanged")
	for p, content := range w.tree("kalypso/dev") {
		require.NotContains(t, content, "ClusterRoleBinding", p)
	}
	require.Contains(t, w.logs.String(), "is not a declared control plane (setting controlPlanes); ignored")
	devHead, err := w.sim.BranchSHA(sample.Owner, sample.WorkloadRepo, "dev")
	require.NoError(t, err)
	require.Empty(t, w.sim.CheckRuns(sample.Owner, sample.WorkloadRepo, devHead), "no check runs for a rogue control plane")
	for _, run := range w.sim.CheckRuns(sample.Owner, sample.WorkloadRepo, sha) {
		require.Equal(t, "success", run.GetConclusion(), "the workload's own check runs are unaffected: %s", run.GetName())
	}
}

// Two declared control planes naming the same GitOps branch: the one that sorts first owns it;
// the other gets an error on its own check run and never writes.
func TestE2ESecondClaimantOfAGitOpsBranchNeverWrites(t *testing.T) {
	w := newWorld(t)
	const second = "zz-platform"
	require.NoError(t, w.sim.CreateRepo(w.seeded.Installation, sample.Owner, second, "main"))
	w.start("KALYPSO_CONTROL_PLANES=" + sample.Owner + "/" + sample.ControlPlane + "," + sample.Owner + "/" + second)
	copyOf := func(branch string, edit func(string) string) map[string]*string {
		tree, err := w.sim.Tree(sample.Owner, sample.ControlPlane, branch)
		require.NoError(t, err)
		files := map[string]*string{}
		for p, c := range tree {
			files[p] = str(edit(strings.ReplaceAll(c, "microsoft/kalypso-control-plane", "microsoft/"+second)))
		}
		return files
	}
	mainFiles := copyOf("main", func(c string) string { return c })
	delete(mainFiles, ".environments/stage.yaml")
	mainSHA := w.commit(second, "main", mainFiles)
	devFiles := copyOf("dev", func(c string) string { return strings.ReplaceAll(c, w.seeded.MainSHA, mainSHA) })
	devFiles["configs/dev-config.yaml"] = str(devConfig("Hijacked"))
	w.commit(second, "dev", devFiles)
	sha := w.commit(second, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Hijacked again"))})

	run := w.check(second, sha, "dev")
	require.NotNil(t, run, "the second claimant is told on its own commit")
	require.Equal(t, "failure", run.GetConclusion())
	require.Contains(t, run.GetOutput().GetSummary()+run.GetOutput().GetText(), "GitOps branch belongs to another environment")
	for p, content := range w.tree("kalypso/dev") {
		require.NotContains(t, content, "Hijacked", p)
	}
	requireTree(t, w.expected("dev"), w.tree("kalypso/dev"), "the first control plane owns kalypso/dev")
	require.Len(t, w.appPRs(), 2, "still one pull request per environment")
}

// Values of a workload repository are free text, never executed, and must land as exactly the
// scalar the template writes them into: a value that would cut the quoted path short (or add
// keys, documents or items) fails the workload's check run at the value's line, naming the
// template's line, and the target keeps its last good output.
func TestE2EWorkloadValuesCannotInjectManifests(t *testing.T) {
	for name, path := range map[string]string{
		"comment cutting the quoted value": `'./prometheus" # the rest is cut'`,
		"flow mapping and new key":         `'./prometheus", prune: false, x: "'`,
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.start()
			before := w.tree("dev") // the last good output is what was merged
			sha := w.commit(sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(observability(path))})
			run := w.check(sample.WorkloadRepo, sha, "dev")
			require.NotNil(t, run)
			require.Equal(t, "failure", run.GetConclusion())
			anns, _, err := w.sim.CheckRunDetails(run.GetID())
			require.NoError(t, err)
			require.NotEmpty(t, anns)
			require.Equal(t, "workloads/observability.yaml", anns[0].GetPath())
			require.Equal(t, 15, anns[0].GetStartLine(), "the line of manifests.path")
			require.Contains(t, anns[0].GetMessage(), "of manifests.path cannot be placed as one YAML scalar where Template \"arc-flux\" at ")
			after := w.tree("kalypso/dev")
			for p, content := range after {
				require.NotContains(t, content, "the rest is cut", p)
				require.NotContains(t, content, "prune: false", p)
				if strings.Contains(p, "observability-prometheus") {
					require.Equal(t, before[p], content, "the target keeps its last good output: %s", p)
				}
			}
		})
	}
}

// Template text in a workload value is written as it is, never run with the platform's config.
func TestE2EWorkloadValuesAreNeverRunAsTemplates(t *testing.T) {
	w := newWorld(t)
	w.start()
	sha := w.commit(sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(observability(`'{{ .ConfigData | toYaml | b64enc }}'`))})
	require.Equal(t, "success", w.check(sample.WorkloadRepo, sha, "dev").GetConclusion())
	reconciler := w.tree("kalypso/dev")["large/observability-prometheus/reconciler.yaml"]
	require.Contains(t, reconciler, `path: "{{ .ConfigData | toYaml | b64enc }}"`)
	require.NotContains(t, reconciler, "mysql")
}

// A second registration, added later but named to sort first, is harmless when the platform
// team accepts it; then its team renames its Workload to another team's and adds a
// platform-config ConfigMap: neither replaces nor blocks anything of the other team.
func TestE2EOneTeamCannotTakeOverAnother(t *testing.T) {
	w := newWorld(t)
	const attacker = "attacker-src"
	require.NoError(t, w.sim.CreateRepo(w.seeded.Installation, sample.Owner, attacker, "main"))
	harmless := strings.NewReplacer("kalypso-svc-gitops", "attacker-gitops", "name: observability", "name: harmless").Replace(observability("./harmless"))
	_, err := w.sim.CommitFiles(sample.Owner, attacker, "main", map[string]*string{"workloads/w.yaml": str(harmless)}, "workloads")
	require.NoError(t, err)
	w.start()
	registration := `apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata:
  name: aaa-first
spec:
  workload: {repo: https://github.com/microsoft/attacker-src, branch: main, path: ./workloads}
  workspace: platform-team
`
	mainSHA := w.commit(sample.ControlPlane, "main", map[string]*string{"workloads/aaa-first.yaml": str(registration)})
	require.Equal(t, "success", w.check(sample.ControlPlane, mainSHA, "dev").GetConclusion())
	pin := strings.Replace(sampleFile(t, "dev", "base-repo.yaml"), "commit: ", "commit: "+mainSHA+" #", 1)
	w.commit(sample.ControlPlane, "dev", map[string]*string{"base-repo.yaml": str(pin)})
	require.Contains(t, w.tree("kalypso/dev")["large/harmless-prometheus/reconciler.yaml"], "./harmless", "the new team is scheduled")
	before := w.tree("kalypso/dev")

	sha := w.commit(attacker, "main", map[string]*string{
		"workloads/w.yaml": str(strings.Replace(observability("./stolen"), "kalypso-svc-gitops", "attacker-gitops", 1)),
		"workloads/config.yaml": str(`apiVersion: v1
kind: ConfigMap
metadata:
  name: aaa-config
  labels: {platform-config: "true"}
data:
  ENVIRONMENT: [broken
`),
	})
	after := w.tree("kalypso/dev")
	for p, content := range after {
		require.NotContains(t, content, "stolen", p)
		if strings.Contains(p, "observability-prometheus") {
			require.Equal(t, before[p], content, "the victim's target is unchanged: %s", p)
		}
	}
	run := w.check(attacker, sha, "dev")
	require.NotNil(t, run, "the attacker's repository is told")
	require.Equal(t, "failure", run.GetConclusion())
	text := run.GetOutput().GetSummary() + run.GetOutput().GetText()
	anns, _, err := w.sim.CheckRunDetails(run.GetID())
	require.NoError(t, err)
	for _, a := range anns {
		text += a.GetPath() + ":" + a.GetMessage() + "\n"
	}
	require.Contains(t, text, `Workload "observability" is also defined at`)
	require.Contains(t, text, "only Workload objects are read from a workload repository")

	// The victim's own change still goes through.
	victim := w.commit(sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(observability("./prometheus-v2"))})
	require.Equal(t, "success", w.check(sample.WorkloadRepo, victim, "dev").GetConclusion())
	require.Contains(t, w.tree("kalypso/dev")["large/observability-prometheus/reconciler.yaml"], "./prometheus-v2")
}

// sampleFile reads a file of the sample control plane's branch.
func sampleFile(t *testing.T, branch, path string) string {
	t.Helper()
	data, err := fs.ReadFile(sample.FS(branch), path)
	require.NoError(t, err)
	return string(data)
}
