package render_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

const sharedSchemaEnv = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: GitOpsRepo
metadata: {name: dev}
spec: {repo: https://github.com/org/gitops, branch: dev, path: .}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: small}
spec: {reconciler: r, namespaceService: r, configType: r}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata: {name: r}
spec:
  type: reconciler
  manifests: ["name: {{ .DeploymentTargetName }}"]
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
`

const sharedSchemaWorkload = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: app}
spec:
  configSchemas: ['{"type":"object","required":["NOPE"]}']
  deploymentTargets:
    - {name: a, environment: dev, manifests: {repo: "https://github.com/org/app-gitops", branch: b, path: a}}
    - {name: b, environment: dev, manifests: {repo: "https://github.com/org/app-gitops", branch: b, path: b}}
    - {name: c, environment: dev, manifests: {repo: "https://github.com/org/app-gitops", branch: b, path: c}}
`

// TestSharedTargetSchemaIsReportedAtEachTarget: the targets of a workload share the text of
// the workload's configSchemas; a violation is reported at the target whose config violates
// it, whichever target's assignment was validated first.
func TestSharedTargetSchemaIsReportedAtEachTarget(t *testing.T) {
	reg := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: WorkloadRegistration\nmetadata: {name: app}\n" +
		"spec: {workload: {repo: https://github.com/org/app, branch: main, path: deploy}, workspace: team}\n"
	res := render.Environment(scheduling.Load(scheduling.Inputs{
		Environment: "dev",
		Env:         scheduling.Source{FS: fstest.MapFS{"env.yaml": {Data: []byte(sharedSchemaEnv + "---\n" + reg)}}, Prefix: "dev:"},
		Workloads:   scheduling.TreeWorkloads(fstest.MapFS{"org/app/main/deploy/w.yaml": {Data: []byte(sharedSchemaWorkload)}}, "wl:"),
	}))
	require.Len(t, res.Failed, 3)
	for key, err := range res.Failed {
		target := key[strings.Index(key, "/")+1:]
		require.Equal(t, scheduling.ObjectRef(scheduling.KindDeploymentTarget, target), err.Object, key)
		require.Contains(t, err.Msg, `schema "`+target+`.configSchemas[0]"`, key)
	}
}
