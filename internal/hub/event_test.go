package hub

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

// The signature vectors of the two real notification-controller bodies (key
// kalypso-example-hmac-key), as documented with them.
var fluxVectors = map[string]string{
	"testdata/flux-kustomization-succeeded.json": "sha256=f29abc761d274fcf7ecabc71cdfa7b163a4a2d5ae1771c4f0c711671d4b79a59",
	"testdata/flux-kustomization-failed.json":    "sha256=3cce4976eee8a2fec629dafd071bff3935537e6b9e0d8a777eee2310bae47cae",
}

const exampleKey = "kalypso-example-hmac-key"

func TestFluxSignatureVectors(t *testing.T) {
	for file, sig := range fluxVectors {
		body, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Equal(t, sig, Sign([]byte(exampleKey), body), file)
		require.True(t, ValidSignature([]byte(exampleKey), body, sig), file)
		require.False(t, ValidSignature([]byte(exampleKey+"\n"), body, sig), "the key is byte for byte: a trailing newline changes it")
		require.False(t, ValidSignature([]byte(exampleKey), append(body, ' '), sig), "the signature covers the raw body")
		require.False(t, ValidSignature([]byte(exampleKey), body, sig[len("sha256="):]), "the sha256= prefix is required")
	}
}

func TestParseRealFluxEvents(t *testing.T) {
	body, err := os.ReadFile("testdata/flux-kustomization-succeeded.json")
	require.NoError(t, err)
	e, err := ParseEvent(body)
	require.NoError(t, err)
	require.Equal(t, Event{Source: SourceFlux, Cluster: "west-01", ClusterType: "large", Object: "Kustomization/flux-system/gitops-dev",
		Branch: "dev", Commit: "3f4a9c2e8b7d61f05a2c9e4b1d8f7a6c5e3b2a10", State: store.StateSuccess, Reason: "ReconciliationSucceeded",
		Message: "Reconciliation finished in 2.481375921s, next run in 10m0s", Timestamp: time.Date(2026, 8, 24, 9, 15, 42, 0, time.UTC)}, e)
	body, err = os.ReadFile("testdata/flux-kustomization-failed.json")
	require.NoError(t, err)
	e, err = ParseEvent(body)
	require.NoError(t, err)
	require.Equal(t, store.StateFailure, e.State)
	require.Equal(t, "HealthCheckFailed", e.Reason)
	require.Equal(t, "9d2e7b41c05f83a6e1b4c7d9a2f6e0b3c8d5a714", e.Commit)
}

func TestParseRevision(t *testing.T) {
	sha := "3f4a9c2e8b7d61f05a2c9e4b1d8f7a6c5e3b2a10"
	for rev, branch := range map[string]string{
		"dev@sha1:" + sha:            "dev",
		"refs/heads/dev@sha1:" + sha: "dev",
		"feature/x@sha1:" + sha:      "feature/x",
		"sha1:" + sha:                "",
		"dev/" + sha:                 "dev",
		"HEAD/" + sha:                "",
		sha:                          "",
	} {
		b, s, err := ParseRevision(rev)
		require.NoError(t, err, rev)
		require.Equal(t, branch, b, rev)
		require.Equal(t, sha, s, rev)
	}
	for _, bad := range []string{"", "dev@sha256:" + sha + sha[:24], "dev@sha1:" + sha[:39], "dev@sha1:" + "3F4A9C2E8B7D61F05A2C9E4B1D8F7A6C5E3B2A10", "v1.2.0"} {
		_, _, err := ParseRevision(bad)
		require.ErrorIs(t, err, ErrInvalid, bad)
	}
}

func TestParseArgoCDAndGenericReports(t *testing.T) {
	sha := "9d2e7b41c05f83a6e1b4c7d9a2f6e0b3c8d5a714"
	argo := `{"source":"argocd","cluster":"","clusterType":"large","destination":"east-02","server":"https://1.2.3.4",
		"application":"dev-large-podinfo","revision":"` + sha + `","targetRevision":"dev","health":"Healthy","phase":"Succeeded",
		"state":"success","message":"successfully synced","timestamp":"2026-08-24T09:15:42Z"}`
	e, err := ParseEvent([]byte(argo))
	require.NoError(t, err)
	require.Equal(t, Event{Source: SourceArgoCD, Cluster: "east-02", ClusterType: "large", Object: "Application/dev-large-podinfo",
		Branch: "dev", Commit: sha, State: store.StateSuccess, Reason: "Succeeded/Healthy", Message: "successfully synced",
		Timestamp: time.Date(2026, 8, 24, 9, 15, 42, 0, time.UTC)}, e)
	generic := `{"source":"generic","cluster":"edge-7","clusterType":"drone","environment":"dev","revision":"dev@sha1:` + sha +
		`","state":"failure","reason":"AnsibleFailed","message":"task 3 failed","timestamp":"2026-08-24T09:15:42+02:00"}`
	e, err = ParseEvent([]byte(generic))
	require.NoError(t, err)
	require.Equal(t, "dev", e.Environment)
	require.Equal(t, store.StateFailure, e.State)
	require.Equal(t, time.Date(2026, 8, 24, 7, 15, 42, 0, time.UTC), e.Timestamp)
}

func TestParseRefusesHostileFields(t *testing.T) {
	ok := func(mut string) string {
		return `{"source":"generic","cluster":"c1","clusterType":"large","revision":"dev@sha1:9d2e7b41c05f83a6e1b4c7d9a2f6e0b3c8d5a714",` +
			`"state":"success","timestamp":"2026-08-24T09:15:42Z"` + mut + `}`
	}
	for name, body := range map[string]string{
		"not json":         `{"source":`,
		"array":            `[1,2]`,
		"unknown source":   `{"source":"jenkins"}`,
		"bad state":        ok(`,"state":"green"`),
		"no timestamp":     ok(`,"timestamp":""`),
		"path cluster":     ok(`,"cluster":"../etc"`),
		"long cluster":     ok(`,"cluster":"` + string(make([]byte, 0)) + `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"`),
		"bad cluster type": ok(`,"clusterType":"Large Type"`),
		"bad environment":  ok(`,"environment":"Dev!"`),
		"bad branch":       ok(`,"revision":"../x@sha1:9d2e7b41c05f83a6e1b4c7d9a2f6e0b3c8d5a714"`),
		"markup reason":    ok(`,"reason":"<script>"`),
		"flux severity":    `{"involvedObject":{"kind":"Kustomization"},"severity":"warning"}`,
	} {
		_, err := ParseEvent([]byte(body))
		require.ErrorIs(t, err, ErrInvalid, name)
	}
	long := make([]byte, 5000)
	for i := range long {
		long[i] = 'x'
	}
	e, err := ParseEvent([]byte(ok(`,"message":"` + string(long) + `"`)))
	require.NoError(t, err)
	require.Len(t, []rune(e.Message), maxMessage+1, "messages are cut to a bound")
}
