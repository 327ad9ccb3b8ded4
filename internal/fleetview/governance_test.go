package fleetview

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/store"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

func stagesOf(t *testing.T, docs map[string]string) *scheduling.Chain {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, doc := range docs {
		fsys[".environments/"+name+".yaml"] = &fstest.MapFile{Data: []byte(doc)}
	}
	envs, errs := scheduling.LoadEnvironments(scheduling.Source{FS: fsys})
	require.Empty(t, errs)
	chain, errs := scheduling.PromotionChain(envs)
	require.Empty(t, errs)
	return chain
}

func envDoc(name, promotion string) string {
	return "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata:\n  name: " + name +
		"\nspec:\n  controlPlane: {repo: https://github.com/acme/plane, branch: " + name + ", path: .}\n  promotion:\n" + promotion
}

func TestTheFleetShowsWindowsApprovalsAwaitedAndHolds(t *testing.T) {
	chain := stagesOf(t, map[string]string{
		"dev":  envDoc("dev", "    timeout: 1m\n"),
		"prod": envDoc("prod", "    after: dev\n    approval: manual\n    approvers: [alice, acme/sre]\n    required: 2\n    windows:\n    - {name: weekdays, kind: allow, schedule: \"0 9 * * 1-5\", duration: 8h, timeZone: Europe/Paris}\n"),
	})
	saturday := time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)
	hold := &store.Hold{ControlPlane: "acme/plane", Environment: "prod", By: "lead", Reason: "rollback: <b>bad</b>", Since: saturday}
	g := governanceOf(chain.Stages["prod"], saturday, hold)
	require.Equal(t, []WindowSpec{{Name: "weekdays", Kind: "allow", Schedule: "0 9 * * 1-5", Duration: "8h0m0s", TimeZone: "Europe/Paris"}}, g.Windows)
	require.False(t, g.WindowOpen)
	require.Equal(t, `closed: outside allow window "weekdays"; opens 2026-03-30 09:00 CEST`, g.Window)
	require.Equal(t, []string{"alice", "acme/sre"}, g.Approvers)
	require.Equal(t, 2, g.Required)
	require.Equal(t, "lead", g.Hold.By)
	require.Equal(t, "2 of alice, acme/sre", approversText(chain.Stages["prod"], "acme/plane"))
	require.Empty(t, governanceOf(chain.Stages["dev"], saturday, nil), "nothing governs dev")

	f := &Fleet{ControlPlanes: []ControlPlane{{Repo: "acme/plane", Environments: []Environment{{Name: "prod", Governance: g,
		Promotion: Promotion{State: StateAwaitingApproval, Approval: &PendingChange{Commit: Commit{Short: "abc1234"}, From: "dev",
			Approvers: approversText(chain.Stages["prod"], "acme/plane")}}}}}}}
	var buf bytes.Buffer
	require.NoError(t, RenderPage(&buf, "alice", f))
	out := buf.String()
	require.Contains(t, out, "approvals awaited from 2 of alice, acme/sre")
	require.Contains(t, out, "held by @lead since 2026-03-28 12:00 UTC: rollback: &lt;b&gt;bad&lt;/b&gt;")
	require.Contains(t, out, `window: closed: outside allow window &#34;weekdays&#34;; opens 2026-03-30 09:00 CEST`)
	b := BadgeFor(f, "acme/plane", "prod")
	require.True(t, strings.HasPrefix(b.Message, "held · "), b.Message)
	require.Equal(t, heldColor, b.Color)
	require.NotContains(t, b.Message, "lead", "a badge shows no user")
}
