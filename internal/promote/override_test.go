package promote

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

func TestAnOverrideRequestPromotesWithItsReason(t *testing.T) {
	t.Parallel()
	w := newWorld(t, devDenyTonight, stageAuto)
	w.gh.Permissions = map[string]string{"alice": "write", "carol": "admin"}
	trail := &memTrail{}
	w.start(w.cache, WithAudit(trail))
	ctx := context.Background()
	dev := envref.Env{Installation: 1, ControlPlane: cp, Name: "dev"}

	_, err := w.p.OverrideWindow(ctx, dev, "", "carol", "hotfix")
	require.ErrorIs(t, err, ErrNothingToOverride, "main's head has no held promotion yet")

	m := w.main("a")
	require.NoError(t, w.p.PromoteMain(ctx, w.loc("", m)))
	_, err = w.p.OverrideWindow(ctx, dev, "", "alice", "hotfix")
	require.ErrorIs(t, err, ErrRefused, "write permission does not override")
	require.ErrorContains(t, err, "needs admin permission")
	require.Equal(t, w.seed, w.pin("dev"))

	out, err := w.p.OverrideWindow(ctx, dev, "", "carol", "hotfix for\nINC-42\x00\t")
	require.NoError(t, err)
	require.Equal(t, Overridden{Environment: "dev", Commit: m, User: "carol", Reason: "hotfix for INC-42"}, out)
	require.Equal(t, m, w.pin("dev"), "pinned as the button pins")
	msg := w.remotes.Message(cp, w.remotes.Head(cp, "dev"))
	require.Contains(t, msg, `Kalypso-Reason: window override by @carol (closed by deny window "nightly"; opens 2023-11-15 00:00 UTC): hotfix for INC-42`)
	require.Contains(t, msg, "\nKalypso-Window-Override: @carol\nKalypso-Window-Override-Reason: hotfix for INC-42\n")
	run := w.approvalRun("dev", m)
	require.Equal(t, "success", run.GetConclusion())
	require.Contains(t, run.GetOutput().GetSummary(), "override reason: hotfix for INC-42")

	_, err = w.p.OverrideWindow(ctx, dev, m, "carol", "again")
	require.ErrorIs(t, err, ErrNothingToOverride, "the check run no longer offers a promotion")

	w.openPR("dev", "cafe03")
	_, err = w.p.Converge(ctx, info("dev"))
	require.NoError(t, err)
	state, desc := w.windowStatus("cafe03")
	require.Equal(t, "success", state)
	require.Contains(t, desc, `overridden by @carol: hotfix for INC-42; closed by deny window "nightly"`)
	require.Contains(t, trail.lines(), "window-override carol dev "+m[:7]+
		` closed by deny window "nightly" (0 22 * * * for 2h, UTC); opens 2023-11-15 00:00 UTC; reason: hotfix for INC-42`)
	require.Contains(t, trail.lines(), "refusal alice dev "+m[:7]+` window override by @alice refused: needs admin permission (has "write")`)
}
