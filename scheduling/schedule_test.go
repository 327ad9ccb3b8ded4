package scheduling

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

const envFiles = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: GitOpsRepo
metadata:
  name: dev
spec:
  repo: https://github.com/org/gitops
  branch: dev
  path: .
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: BaseRepo
metadata:
  name: main
spec:
  repo: https://github.com/org/cp
  branch: main
  path: .
  commit: abc
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata:
  name: edge
  labels: {region: east, edge: "true"}
spec: {reconciler: r, namespaceService: n, configType: c}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata:
  name: big
  labels: {region: west, size: large}
spec: {reconciler: r, namespaceService: n, configType: c}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata:
  name: plain
spec: {reconciler: r, namespaceService: n, configType: c}
`

const mainFiles = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata:
  name: team-a
spec:
  workload: {repo: https://github.com/org/app, branch: main, path: deploy}
  workspace: team-a
`

const workloadFile = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: app
  labels: {tier: web, purpose: overridden-by-workload}
spec:
  deploymentTargets:
    - name: func
      labels: {purpose: test, workload: spoofed}
      environment: dev
      manifests: {repo: "https://github.com/org/app-gitops", branch: b, path: p}
    - name: prod
      labels: {purpose: prod}
      environment: dev
      manifests: {repo: "https://github.com/org/app-gitops", branch: b, path: p}
    - name: other
      environment: stage
      manifests: {repo: "https://github.com/org/app-gitops", branch: b, path: p}
`

func fixtureSnapshot(t *testing.T, policies string) *Snapshot {
	t.Helper()
	wl := TreeWorkloads(fstest.MapFS{"org/app/main/deploy/w.yaml": {Data: []byte(workloadFile)}}, "wl:")
	snap := Load(Inputs{
		Environment: "dev",
		Env:         Source{FS: fstest.MapFS{"env.yaml": {Data: []byte(envFiles)}, "policies.yaml": {Data: []byte(policies)}}, Prefix: "dev:"},
		Main:        Source{FS: fstest.MapFS{"reg.yaml": {Data: []byte(mainFiles)}}, Prefix: "main:"},
		Workloads:   wl,
	})
	return snap
}

func policy(name, workspace, dt, ct string) string {
	return "---\napiVersion: scheduler.kalypso.io/v1alpha1\nkind: SchedulingPolicy\nmetadata:\n  name: " + name +
		"\nspec:\n  deploymentTargetSelector:\n    workspace: \"" + workspace + "\"\n    labelSelector: " + dt +
		"\n  clusterTypeSelector:\n    labelSelector: " + ct + "\n"
}

func keys(as []*Assignment) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Key())
	}
	return out
}

func TestTargetsAndLabels(t *testing.T) {
	snap := fixtureSnapshot(t, "")
	require.Empty(t, snap.Errors.Error())
	require.Len(t, snap.Targets, 2, "only this environment's targets")
	func_ := snap.Targets[0]
	require.Equal(t, "app-func", func_.Name)
	require.Equal(t, map[string]string{
		"tier": "web", "purpose": "overridden-by-workload", "workload": "app", "workspace": "team-a",
		"kustomize.toolkit.fluxcd.io/name": "dev-team-a", "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
	}, func_.Labels, "workload labels win over target labels; workload and workspace are set last")
	require.Equal(t, "wl:org/app/main/deploy/w.yaml", func_.Pos.File)
	require.Equal(t, 8, func_.Pos.Line)
}

func TestSchedule(t *testing.T) {
	cases := []struct {
		name, policies string
		want           []string
	}{
		{"empty selectors match everything", policy("p", "", "{}", "{}"),
			[]string{"big/app-func", "big/app-prod", "edge/app-func", "edge/app-prod", "plain/app-func", "plain/app-prod"}},
		{"matchLabels", policy("p", "", "{matchLabels: {tier: web}}", "{matchLabels: {size: large}}"),
			[]string{"big/app-func", "big/app-prod"}},
		{"In and NotIn", policy("p", "", "{}", "{matchExpressions: [{key: region, operator: In, values: [east, north]}]}") +
			policy("q", "", "{}", "{matchExpressions: [{key: region, operator: NotIn, values: [east]}]}"),
			[]string{"big/app-func", "big/app-prod", "edge/app-func", "edge/app-prod", "plain/app-func", "plain/app-prod"}},
		{"Exists and DoesNotExist", policy("p", "", "{}", "{matchExpressions: [{key: edge, operator: Exists}]}") +
			policy("q", "", "{}", "{matchExpressions: [{key: region, operator: DoesNotExist}]}"),
			[]string{"edge/app-func", "edge/app-prod", "plain/app-func", "plain/app-prod"}},
		{"workspace filter", policy("p", "team-b", "{}", "{}"), nil},
		{"workspace match", policy("p", "team-a", "{matchExpressions: [{key: workload, operator: In, values: [app]}]}", "{matchLabels: {region: west}}"),
			[]string{"big/app-func", "big/app-prod"}},
		{"overlapping policies merge", policy("p", "", "{}", "{matchLabels: {size: large}}") + policy("q", "", "{}", "{matchLabels: {region: west}}"),
			[]string{"big/app-func", "big/app-prod"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap := fixtureSnapshot(t, tc.policies)
			require.Empty(t, snap.Errors)
			got := Schedule(snap)
			require.Equal(t, tc.want, keys(got))
		})
	}
	snap := fixtureSnapshot(t, policy("q", "", "{}", "{matchLabels: {region: west}}")+policy("p", "", "{}", "{matchLabels: {size: large}}"))
	a := Schedule(snap)[0]
	require.Equal(t, []string{"p", "q"}, a.Policies)
	require.Equal(t, "dev-big-app-func", a.Namespace())
	require.Equal(t, "app-app-func-big", a.Name())
}

func TestInvalidPolicyIsBrokenAndSnapshotIncomplete(t *testing.T) {
	snap := fixtureSnapshot(t, policy("p", "", "{matchExpressions: [{key: a, operator: Matches}]}", "{}")+policy("q", "", "{}", "{matchLabels: {size: large}}"))
	require.Len(t, snap.Errors, 1)
	require.Contains(t, snap.Errors[0].Error(), `dev:policies.yaml:9: SchedulingPolicy "p": spec.deploymentTargetSelector: "Matches" is not a valid label selector operator`)
	require.True(t, snap.Incomplete)
	require.Equal(t, []string{"big/app-func", "big/app-prod"}, keys(Schedule(snap)), "the valid policy still schedules")
}

func TestDuplicatesReportedOnce(t *testing.T) {
	snap := fixtureSnapshot(t, policy("p", "", "{}", "{}")+policy("p", "", "{}", "{}"))
	require.Len(t, snap.Errors, 1)
	require.Regexp(t, `dev:policies.yaml:13: SchedulingPolicy "p": SchedulingPolicy "p" is also defined at dev:policies.yaml:2`, snap.Errors[0].Error())
}
