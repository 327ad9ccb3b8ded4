package fleetview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// brokenFleet has dev rendered with two errors, its one assignment held back, while its
// last promotion says "deployed".
func brokenFleet() *Fleet {
	branch := &Commit{SHA: strings.Repeat("c", 40), Short: "ccccccc", Message: "Misspelt cluster type", URL: "https://github.com/acme/plane/commit/ccc"}
	return &Fleet{ControlPlanes: []ControlPlane{{Repo: "acme/plane", Environments: []Environment{{
		Name:      "dev",
		Promotion: Promotion{State: StateDeployed, Expected: 1, Deployed: &Commit{Short: "ddddddd"}},
		Render:    Render{State: RenderError, Errors: 2, Held: 1, Summary: "2 errors, changes held back", Commit: branch},
		Assignments: []Assignment{{ClusterType: "large", Target: "observability-prometheus", Folder: "large/observability-prometheus",
			URL: "https://x", State: AssignmentHeld}},
		Errors: []Problem{{File: "cluster-types/large.yaml", Line: 9, Message: `missing required field "reconciler"`},
			{File: "cluster-types/large.yaml", Line: 9, Message: `unknown field "reconciller"`}},
	}}}}}
}

func TestCardAndBadgeShowABrokenRender(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, RenderPage(&buf, "alice", brokenFleet()))
	page := buf.String()
	require.Contains(t, page, `data-state="error" data-promotion="deployed" data-render="error"`)
	require.Contains(t, page, `<span class="state state-error">2 errors, changes held back</span>`)
	require.Contains(t, page, `dev branch at <a href="https://github.com/acme/plane/commit/ccc"><code class="render-commit">ccccccc</code></a>`)
	require.Contains(t, page, "GitOps keeps the last good output of 1 assignment.")
	require.Contains(t, page, `promotion: <span class="promotion-state">deployed to 1 cluster</span>`)
	require.Contains(t, page, `<details class="drill" data-env="dev" open>`, "the errors are not hidden")
	require.Contains(t, page, "dev: 1 assignment (1 held back), 2 errors")
	require.Contains(t, page, "held back: last good output kept")

	b := BadgeFor(brokenFleet(), "acme/plane", "dev")
	require.Equal(t, Badge{Label: "dev", Message: "2 errors, changes held back ccccccc", Color: stateColor(StateFailed)}, b)
}
