package app

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A public key given as the App's private key is refused with a message naming the file and
// the setting (and its variable), not a bare parser error.
func TestNewNamesTheKeyFileAndSetting(t *testing.T) {
	gh := newFakeGitHub(t)
	block, _ := pem.Decode([]byte(keyOnce()))
	key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	require.NoError(t, err)
	pub, err := x509.MarshalPKIXPublicKey(key.Public().(*rsa.PublicKey))
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "app.pem")
	require.NoError(t, os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600))

	cfg := testConfig(t, gh.URL)
	cfg.GitHub.App.PrivateKey = ""
	cfg.GitHub.App.PrivateKeyFile = file
	_, err = New(cfg)
	require.Error(t, err)
	require.Equal(t, "app: github.app.privateKeyFile (KALYPSO_GITHUB_APP_PRIVATE_KEY_FILE): file "+file+
		": holds a public key (PUBLIC KEY), not the GitHub App's private key (App settings: Private keys, Generate a private key)", err.Error())

	cfg = testConfig(t, gh.URL)
	cfg.GitHub.App.PrivateKey = "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"
	_, err = New(cfg)
	require.ErrorContains(t, err, "app: github.app.privateKey (KALYPSO_GITHUB_APP_PRIVATE_KEY): not a usable RSA private key (PEM block RSA PRIVATE KEY): ")
}

// Durations in the log say their unit in the key.
func TestLoggedDurationsNameTheirUnit(t *testing.T) {
	gh := newFakeGitHub(t)
	cfg := testConfig(t, gh.URL)
	h := handlerFunc{events: []string{"push"}, fn: func(context.Context, string, string, []byte) error { return nil }}
	s, logs := newTestServer(t, cfg, WithHandlers(h))
	r := start(t, s)
	require.Equal(t, http.StatusOK, deliver(t, r.url, "push", pushPayload, sign(testSecret, pushPayload)))
	eventually(t, func() bool { return strings.Contains(logs.String(), `"webhook processed"`) }, "the webhook is processed")
	require.NoError(t, r.stop(t))
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"webhook processed"`) || strings.Contains(line, `"resync done"`) {
			var entry map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &entry))
			require.IsType(t, float64(0), entry["elapsed_ms"], line)
			require.NotContains(t, entry, "elapsed", line)
		}
	}
}
