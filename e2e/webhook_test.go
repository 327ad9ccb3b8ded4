package e2e

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// A delivery without a valid signature is rejected with 400 and changes nothing; the same
// delivery, properly signed, is then processed (so the rejected ones would have done something).
func TestE2EBadWebhookSignatureIsRejected(t *testing.T) {
	w := newWorld(t)
	w.start()
	head, pr := w.head("kalypso/dev"), w.appPR("dev")
	require.NotNil(t, pr)
	w.sim.DropWebhooks(true)
	sha := w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("Unsigned"))})
	w.sim.DropWebhooks(false)
	d := w.pushDelivery(sha)
	require.Equal(t, githubsim.DeliveryDropped, d.State)

	tampered := bytes.Replace(d.Body, []byte(sha), []byte(w.seeded.MainSHA), 1)
	cases := []struct {
		name   string
		body   []byte
		header func(h http.Header)
	}{
		{"missing signature", d.Body, func(h http.Header) { h.Del("X-Hub-Signature-256"); h.Del("X-Hub-Signature") }},
		{"signed with another secret", d.Body, func(h http.Header) { h.Set("X-Hub-Signature-256", githubsim.Sign("not-the-secret", d.Body)) }},
		{"body changed after signing", tampered, func(http.Header) {}},
		{"malformed signature", d.Body, func(h http.Header) { h.Set("X-Hub-Signature-256", "sha256=zz") }},
		{"SHA-1 signature from another secret only", d.Body, func(h http.Header) {
			h.Del("X-Hub-Signature-256")
			h.Set("X-Hub-Signature", "sha1=0123456789abcdef0123456789abcdef01234567")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, "http://"+w.addr+"/api/github/hook", bytes.NewReader(tc.body))
			require.NoError(t, err)
			req.Header = d.Header.Clone()
			tc.header(req.Header)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, "the app rejects the delivery")
		})
	}
	w.settle()
	require.Zero(t, w.processed()[d.ID], "no rejected delivery was processed")
	require.Empty(t, w.checks(sample.ControlPlane, sha, "dev"), "no check run")
	require.Equal(t, head, w.head("kalypso/dev"), "no commit")
	require.Len(t, w.prsOf("kalypso/dev"), 1, "no new pull request")
	require.Equal(t, pr.GetUpdatedAt(), w.appPR("dev").GetUpdatedAt(), "the pull request is not touched")

	// The genuine delivery does what the forged ones could not.
	w.redeliver(d.ID)
	require.NotNil(t, w.check(sample.ControlPlane, sha, "dev"), "the signed delivery is processed")
	require.NotEqual(t, head, w.head("kalypso/dev"))
	require.Contains(t, w.tree("kalypso/dev")["large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: Unsigned\n")
}

// A push the app never processed, because it was down or killed, is repaired by the resync
// when the app starts again.
func TestE2EResyncAfterRestartConverges(t *testing.T) {
	cases := []struct {
		name string
		down func(w *world) string // makes a push the app misses (or may miss), returns its commit
	}{{
		name: "push while stopped",
		down: func(w *world) string {
			w.stop()
			sha := w.commit(sample.ControlPlane, "dev", map[string]*string{"configs/dev-config.yaml": str(devConfig("WhileDown"))})
			d := w.pushDelivery(sha)
			require.Equal(w.t, githubsim.DeliveryFailed, d.State, "nothing listens: the delivery fails")
			return sha
		},
	}, {
		name: "killed while processing",
		down: func(w *world) string {
			sha, err := w.sim.CommitFiles(sample.Owner, sample.ControlPlane, "dev",
				map[string]*string{"configs/dev-config.yaml": str(devConfig("WhileDown"))}, "change")
			require.NoError(w.t, err)
			w.kill()
			return sha
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.start()
			pr := w.appPR("dev")
			require.NotNil(t, pr)
			tc.down(w)
			w.start()
			w.settle()

			prs := w.prsOf("kalypso/dev")
			require.Len(t, prs, 1, "one pull request for dev")
			require.Equal(t, pr.GetNumber(), prs[0].GetNumber(), "the same pull request is updated")
			got := w.tree("kalypso/dev")
			require.Contains(t, got["large/observability-prometheus/platform-config.yaml"], "ENVIRONMENT: WhileDown\n",
				"the resync applied the missed push")
			requireTree(t, w.expected("dev"), got, "kalypso/dev after the resync")
			require.Len(t, w.appPRs(), 2)
		})
	}
}
