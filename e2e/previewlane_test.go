package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

const namespaceTemplate = "templates/scheduler_v1alpha1_template_namespace.yaml"

// slowNamespace is the sample's namespace template with a loop that runs until render.timeout.
func slowNamespace(i int) *string {
	return str(fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata:
  name: default
spec:
  type: namespace
  manifests:
    - |
      {{ $l := until 10000 }}{{ range $l }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}{{ end }}
      apiVersion: v1
      kind: Namespace
      metadata:
        name: "{{ .Namespace}}"
        labels:
          push: "%d"
`, i))
}

// Eight pushes to a fork's pull request whose template renders until render.timeout keep the
// previews busy; a platform push to dev meanwhile is reconciled and reported at once, in the
// reconciles' own workers, while no preview has finished yet.
func TestE2EPreviewsNeverDelayReconciles(t *testing.T) {
	w := newWorld(t)
	w.start("KALYPSO_RENDER_TIMEOUT=15s", "KALYPSO_SERVER_SHUTDOWN_TIMEOUT=1s")
	number, head, err := w.sim.OpenForkPR(sample.Owner, sample.ControlPlane, "mallory", "main", map[string]*string{namespaceTemplate: slowNamespace(0)}, "Slow", "mallory")
	require.NoError(t, err)
	heads := []string{head}
	for i := 1; i < 8; i++ {
		head, err = w.sim.PushForkPR(sample.Owner, sample.ControlPlane, number, map[string]*string{namespaceTemplate: slowNamespace(i)}, "Slower")
		require.NoError(t, err)
		heads = append(heads, head)
	}
	dev, err := w.sim.CommitFiles(sample.Owner, sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Meanwhile"))}, "meanwhile")
	require.NoError(t, err)
	id := w.pushDelivery(dev).ID
	w.eventually(func() bool { return w.processed()[id] >= 1 }, "the push to dev is processed")

	require.Equal(t, "success", w.check(sample.ControlPlane, dev, "dev").GetConclusion())
	require.Contains(t, w.tree("kalypso/dev")["large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: Meanwhile")
	for _, h := range heads {
		require.Empty(t, w.previews(sample.ControlPlane, h, "dev"), "the previews were still rendering")
	}
	w.stop() // the preview in progress is cancelled
}

// While a pull request's preview waits, every push to it coalesces: one preview, of the newest
// head (read from GitHub when the preview runs); the heads pushed meanwhile get none.
func TestE2EAPreviewReadsThePullRequestsNewestHead(t *testing.T) {
	w := newWorld(t)
	w.start()
	gate := make(chan struct{})
	w.sim.InjectFault(githubsim.Fault{Method: "GET", PathPattern: "/repos/{owner}/{repo}/pulls/{pull_number}", Gate: gate})
	west, err := w.sim.ReadFile(sample.Owner, sample.ControlPlane, "dev", westUSConfig)
	require.NoError(t, err)
	tune := func(i int) *string { return str(strings.Replace(west, "mysql2", fmt.Sprintf("mysql-%d", i), 1)) }
	number, head, err := w.sim.OpenForkPR(sample.Owner, sample.ControlPlane, "mallory", "dev", map[string]*string{westUSConfig: tune(0)}, "Tune", "mallory")
	require.NoError(t, err)
	w.eventually(func() bool { return w.sim.HeldCalls() == 1 }, "the preview reads the pull request")
	heads := []string{head}
	for i := 1; i < 8; i++ {
		head, err = w.sim.PushForkPR(sample.Owner, sample.ControlPlane, number, map[string]*string{westUSConfig: tune(i)}, "Tune again")
		require.NoError(t, err)
		heads = append(heads, head)
	}
	close(gate)
	w.settle()

	newest := heads[len(heads)-1]
	runs := w.previews(sample.ControlPlane, newest, "dev")
	require.Len(t, runs, 1)
	require.Equal(t, "success", runs[0].GetConclusion())
	// A fork's preview shows names only; a writer's click shows the newest head's content.
	require.NotContains(t, runs[0].GetOutput().GetText(), "mysql-")
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	require.NoError(t, w.sim.ClickCheckRunAction(runs[0].GetID(), "kalypso-full-preview", "lead"))
	w.settle()
	runs = w.previews(sample.ControlPlane, newest, "dev")
	require.Len(t, runs, 1)
	require.Contains(t, runs[0].GetOutput().GetText(), "mysql-7")
	for _, h := range heads[:len(heads)-1] {
		require.Empty(t, w.previews(sample.ControlPlane, h, "dev"), "a superseded head is not previewed")
	}
	comments := w.sim.Comments(sample.Owner, sample.ControlPlane, number)
	require.Len(t, comments, 1)
	require.Contains(t, comments[0].GetBody(), newest[:7])
}

// Each author has a budget of previews per hour: beyond it, the new head's check runs are
// neutral and say so, and nothing is computed.
func TestE2EPreviewsPerAuthorAreBounded(t *testing.T) {
	w := newWorld(t)
	w.start("KALYPSO_PREVIEW_PER_AUTHOR_PER_HOUR=1")
	west, err := w.sim.ReadFile(sample.Owner, sample.ControlPlane, "dev", westUSConfig)
	require.NoError(t, err)
	number, first, err := w.sim.OpenForkPR(sample.Owner, sample.ControlPlane, "mallory", "dev",
		map[string]*string{westUSConfig: str(strings.Replace(west, "mysql2", "mysql3", 1))}, "Tune", "mallory")
	require.NoError(t, err)
	w.settle()
	require.Equal(t, "success", w.previews(sample.ControlPlane, first, "dev")[0].GetConclusion())
	second, err := w.sim.PushForkPR(sample.Owner, sample.ControlPlane, number, map[string]*string{westUSConfig: str(strings.Replace(west, "mysql2", "mysql4", 1))}, "Again")
	require.NoError(t, err)
	w.settle()
	runs := w.previews(sample.ControlPlane, second, "dev")
	require.Len(t, runs, 1)
	require.Equal(t, "neutral", runs[0].GetConclusion())
	require.Equal(t, "preview postponed: budget of @mallory used up", runs[0].GetOutput().GetTitle())
	require.Contains(t, runs[0].GetOutput().GetSummary(), "preview.perAuthorPerHour")
}
