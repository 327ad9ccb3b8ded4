package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// A quorum of two approvers, one of them through a team: the author's own click and a repeated
// click do not count, the pin and the Deployment record both approvers.
func TestE2EApprovalQuorumWithATeamAndFourEyes(t *testing.T) {
	w := newWorld(t)
	storeFile := filepath.Join(t.TempDir(), "hub.db")
	w.start("KALYPSO_PROMOTION_POLL_INTERVAL=100ms", "KALYPSO_STORE_PATH="+storeFile)
	for _, u := range []string{"octocat", "lead", "releaser"} {
		require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, u, "write"))
	}
	w.sim.SetTeam(sample.Owner, "release-managers", []string{"releaser"})
	stage := "    after: dev\n    approval: manual\n    approvers: [lead, octocat, " + sample.Owner + "/release-managers]\n    required: 2\n"
	m := w.declareChain(devOneCluster, stage)
	run := w.deployToDev(m)
	require.Contains(t, run.GetOutput().GetSummary(), "Awaited: 2 more from lead, octocat, "+sample.Owner+"/release-managers")

	w.click(run, "octocat") // the sample's commits are octocat's
	summary := w.checkRun(m, run.GetID()).GetOutput().GetSummary()
	require.Contains(t, summary, "@octocat made main "+m[:7]+" and cannot approve its promotion (four eyes)")
	require.Contains(t, summary, "Approved by: nobody yet")

	w.click(run, "releaser")
	w.click(run, "releaser")
	after := w.checkRun(m, run.GetID())
	require.Equal(t, "1 of 2 approvals to promote to stage", after.GetOutput().GetTitle())
	require.Contains(t, after.GetOutput().GetSummary(), "@releaser approved already; each approver counts once")
	require.Contains(t, after.GetOutput().GetSummary(), "Approved by: @releaser\n- Awaited: 1 more")
	require.NotEqual(t, m, w.pinOf("stage"), "one approval of two does not promote")

	w.click(run, "lead")
	w.waitStatus("stage", m, "pending", "waiting for the GitOps pull request")
	require.Equal(t, m, w.pinOf("stage"))
	require.Contains(t, w.headMessage(sample.ControlPlane, "stage"), "Kalypso-Reason: approved by @releaser, @lead")
	require.Equal(t, "Promoted by @releaser, @lead", w.checkRun(m, run.GetID()).GetOutput().GetTitle())

	w.mergeEnvPR("stage", m)
	var approvers []string
	w.eventually(func() bool {
		for _, d := range w.sim.Deployments(sample.Owner, sample.ControlPlane) {
			var pl struct {
				Approvers []string `json:"approvers"`
			}
			if d.GetEnvironment() == "stage" && d.GetSHA() == m && json.Unmarshal(d.Payload, &pl) == nil {
				approvers = pl.Approvers
				return true
			}
		}
		return false
	}, "the stage Deployment of "+m[:7])
	require.Equal(t, "releaser,lead", strings.Join(approvers, ","), "the Deployment's payload records every approver")

	require.Equal(t, []string{
		"refusal octocat stage " + m[:7],
		"approval releaser stage " + m[:7],
		"refusal releaser stage " + m[:7],
		"approval lead stage " + m[:7],
		"pin lead stage " + m[:7],
	}, auditLines(w.auditEntries("lead", "&environment=stage&kind=approval,refusal,pin")))
	dev := w.auditEntries("lead", "&environment=dev")
	require.Equal(t, []string{"pin kalypso dev " + m[:7], "promotion kalypso dev " + m[:7]},
		auditLines(dev), "the automatic pin and the promotion's end")
	require.Equal(t, w.pushDelivery(m).ID, dev[0].Delivery, "the automatic pin names the push that made it due")
	require.NotEmpty(t, dev[1].Delivery, "the promotion's end names what made it due")
	w.stop()
	out, err := auditVerify(t, storeFile)
	require.NoError(t, err, out)
}
