package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testKey = "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"

// envMap returns an env lookup over m.
func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// validEnv is the minimal environment that passes validation.
func validEnv(extra map[string]string) func(string) string {
	m := map[string]string{
		"KALYPSO_GITHUB_APP_INTEGRATION_ID": "42",
		"KALYPSO_GITHUB_APP_WEBHOOK_SECRET": "s3cret",
		"KALYPSO_GITHUB_APP_PRIVATE_KEY":    testKey,
		"TMPDIR":                            "/var/tmp",
	}
	for k, v := range extra {
		m[k] = v
	}
	return envMap(m)
}

// writeFile writes a config file in a temp dir and returns its path.
func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

func TestDefaults(t *testing.T) {
	cfg, err := Load("", validEnv(nil))
	require.NoError(t, err)
	assert.Equal(t, ":8080", cfg.Server.Address)
	assert.Equal(t, 30*time.Second, cfg.Server.ShutdownTimeout.Std())
	assert.Equal(t, "https://api.github.com/", cfg.GitHub.V3APIURL)
	assert.Equal(t, "https://github.com", cfg.GitHub.WebURL)
	assert.Equal(t, "https://api.github.com/graphql", cfg.GitHub.GraphQLURL)
	assert.Equal(t, "", cfg.Cache.Dir, "the git cache is in memory by default")
	assert.Equal(t, 10*time.Minute, cfg.Resync.Interval.Std())
	assert.Equal(t, 4, cfg.Workers)
	assert.Equal(t, 1000, cfg.QueueSize)
	assert.Equal(t, 6, cfg.Queue.MaxAttempts)
	assert.Equal(t, 1, cfg.Preview.Workers)
	assert.Equal(t, 30, cfg.Preview.PerAuthorPerHour)
	assert.Equal(t, "info", cfg.Log.Level)
	assert.Equal(t, "json", cfg.Log.Format)
	assert.Equal(t, int64(42), cfg.GitHub.App.IntegrationID)
	assert.Equal(t, ":9090", cfg.Server.ManagementAddress)
	assert.Equal(t, 10*time.Second, cfg.Server.ReadHeaderTimeout.Std())
	assert.Equal(t, 30*time.Second, cfg.Server.ReadTimeout.Std())
	assert.Equal(t, time.Minute, cfg.Server.WriteTimeout.Std())
	assert.Equal(t, time.Minute, cfg.Server.IdleTimeout.Std())
	assert.Equal(t, 16384, cfg.Server.MaxHeaderBytes)
	assert.Equal(t, 1024, cfg.Server.MaxConnections)
	assert.Equal(t, 8, cfg.Server.MaxConcurrentBodies)
}

func TestServerSettings(t *testing.T) {
	path := writeFile(t, `
server:
  managementAddress: 127.0.0.1:9191
  readHeaderTimeout: 5s
  readTimeout: 20s
  writeTimeout: 25s
  idleTimeout: 2m
  maxHeaderBytes: 8192
  maxConcurrentBodies: 4
`)
	cfg, err := Load(path, validEnv(map[string]string{
		"KALYPSO_SERVER_READ_HEADER_TIMEOUT":   "2s",
		"KALYPSO_SERVER_MAX_CONCURRENT_BODIES": "2",
	}))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:9191", cfg.Server.ManagementAddress)
	assert.Equal(t, 2*time.Second, cfg.Server.ReadHeaderTimeout.Std())
	assert.Equal(t, 20*time.Second, cfg.Server.ReadTimeout.Std())
	assert.Equal(t, 25*time.Second, cfg.Server.WriteTimeout.Std())
	assert.Equal(t, 2*time.Minute, cfg.Server.IdleTimeout.Std())
	assert.Equal(t, 8192, cfg.Server.MaxHeaderBytes)
	assert.Equal(t, 2, cfg.Server.MaxConcurrentBodies)

	_, err = Load("", validEnv(map[string]string{
		"KALYPSO_SERVER_ADDRESS":               ":8080",
		"KALYPSO_SERVER_MANAGEMENT_ADDRESS":    ":8080",
		"KALYPSO_SERVER_READ_HEADER_TIMEOUT":   "1m",
		"KALYPSO_SERVER_WRITE_TIMEOUT":         "10s",
		"KALYPSO_SERVER_IDLE_TIMEOUT":          "0",
		"KALYPSO_SERVER_MAX_HEADER_BYTES":      "100",
		"KALYPSO_SERVER_MAX_CONCURRENT_BODIES": "0",
	}))
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.ElementsMatch(t, []string{
		"server.managementAddress (KALYPSO_SERVER_MANAGEMENT_ADDRESS) must differ from server.address (KALYPSO_SERVER_ADDRESS): /metrics must not be served on the public listener",
		"server.readHeaderTimeout (KALYPSO_SERVER_READ_HEADER_TIMEOUT) must not exceed server.readTimeout (KALYPSO_SERVER_READ_TIMEOUT)",
		"server.writeTimeout (KALYPSO_SERVER_WRITE_TIMEOUT) must be positive and at least server.readTimeout (KALYPSO_SERVER_READ_TIMEOUT): it runs from the end of the headers, while the body is still read",
		"server.idleTimeout (KALYPSO_SERVER_IDLE_TIMEOUT) must be positive",
		"server.maxHeaderBytes (KALYPSO_SERVER_MAX_HEADER_BYTES) must be at least 4096",
		"server.maxConcurrentBodies (KALYPSO_SERVER_MAX_CONCURRENT_BODIES) must be at least 1",
	}, ve.Problems)

	// Port 0 on both picks two free ports: allowed (tests do it).
	_, err = Load("", validEnv(map[string]string{"KALYPSO_SERVER_ADDRESS": "127.0.0.1:0", "KALYPSO_SERVER_MANAGEMENT_ADDRESS": "127.0.0.1:0"}))
	assert.NoError(t, err)
}

func TestFileThenEnvOverrides(t *testing.T) {
	path := writeFile(t, `
server:
  address: 127.0.0.1:9000
  shutdownTimeout: 5s
github:
  v3APIURL: https://ghe.example.com/api/v3
  webURL: https://ghe.example.com/
  app:
    integrationID: 7
    webhookSecret: from-file
resync:
  interval: 0
workers: 2
log:
  level: debug
  format: console
`)
	env := validEnv(map[string]string{
		"KALYPSO_WORKERS":                   "8",
		"KALYPSO_GITHUB_APP_INTEGRATION_ID": "",
		"KALYPSO_GITHUB_APP_WEBHOOK_SECRET": "from-env",
		"KALYPSO_CACHE_DIR":                 "/data/cache",
	})
	cfg, err := Load(path, env)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:9000", cfg.Server.Address)
	assert.Equal(t, 5*time.Second, cfg.Server.ShutdownTimeout.Std())
	assert.Equal(t, "https://ghe.example.com/api/v3/", cfg.GitHub.V3APIURL)
	assert.Equal(t, "https://ghe.example.com", cfg.GitHub.WebURL)
	assert.Equal(t, "https://ghe.example.com/api/graphql", cfg.GitHub.GraphQLURL)
	assert.Equal(t, "https://ghe.example.com/api/v3", cfg.APIBaseURL())
	assert.Equal(t, int64(7), cfg.GitHub.App.IntegrationID, "an empty variable does not override")
	assert.Equal(t, "from-env", cfg.GitHub.App.WebhookSecret.Value())
	assert.Equal(t, time.Duration(0), cfg.Resync.Interval.Std())
	assert.Equal(t, 8, cfg.Workers)
	assert.Equal(t, "/data/cache", cfg.Cache.Dir)
	assert.Equal(t, "console", cfg.Log.Format)
}

func TestMissingWebhookSecret(t *testing.T) {
	_, err := Load("", validEnv(map[string]string{"KALYPSO_GITHUB_APP_WEBHOOK_SECRET": ""}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "github.app.webhookSecret (KALYPSO_GITHUB_APP_WEBHOOK_SECRET) is required")
}

func TestValidateCollectsEveryProblem(t *testing.T) {
	_, err := Load("", envMap(map[string]string{
		"KALYPSO_WORKERS":         "0",
		"KALYPSO_LOG_FORMAT":      "xml",
		"KALYPSO_GITHUB_WEB_URL":  "github.com",
		"KALYPSO_RESYNC_INTERVAL": "soon",
		"KALYPSO_QUEUE_SIZE":      "many",
	}))
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	msg := err.Error()
	for _, want := range []string{
		"KALYPSO_RESYNC_INTERVAL: invalid duration \"soon\"",
		"KALYPSO_QUEUE_SIZE: invalid integer \"many\"",
		"github.app.webhookSecret (KALYPSO_GITHUB_APP_WEBHOOK_SECRET) is required",
		"github.app.integrationID (KALYPSO_GITHUB_APP_INTEGRATION_ID) is required",
		"github.app.privateKey (KALYPSO_GITHUB_APP_PRIVATE_KEY) and github.app.privateKeyFile",
		"github.webURL (KALYPSO_GITHUB_WEB_URL): \"github.com\" is not an absolute http(s) URL",
		"workers (KALYPSO_WORKERS) must be at least 1",
		"log.format (KALYPSO_LOG_FORMAT) \"xml\" is not one of json, console",
	} {
		assert.Contains(t, msg, want)
	}
	assert.Len(t, ve.Problems, 8)
}

func TestBadDurationInFile(t *testing.T) {
	path := writeFile(t, "server:\n  address: \":1\"\n  shutdownTimeout: 10 seconds\nhandlerTimeout: 30\n")
	_, err := Load(path, validEnv(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+":3: server.shutdownTimeout (KALYPSO_SERVER_SHUTDOWN_TIMEOUT): invalid duration \"10 seconds\"")
	assert.Contains(t, err.Error(), path+":4: handlerTimeout (KALYPSO_HANDLER_TIMEOUT): invalid duration \"30\": add a unit, for example 30s")
}

func TestUnknownKeyReportsFileAndLine(t *testing.T) {
	path := writeFile(t, "workers: 2\ngithub:\n  app:\n    webhook_secret: x\n  colour: blue\nextra: 1\n")
	_, err := Load(path, validEnv(nil))
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, []string{
		path + `:4: unknown key "github.app.webhook_secret" (did you mean "github.app.webhookSecret"?)`,
		path + `:5: unknown key "github.colour"`,
		path + `:6: unknown key "extra"`,
	}, pe.Problems)
}

// A value of the wrong type names its line, its key (with the variable) and what it expects.
func TestSyntaxAndTypeErrorsReportLine(t *testing.T) {
	path := writeFile(t, "log:\n  level: info\nworkers: four\ngithub:\n  app:\n    integrationID: abc\nqueueSize: [1]\n")
	_, err := Load(path, validEnv(nil))
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, []string{
		path + `:3: workers (KALYPSO_WORKERS): "four" is not an integer`,
		path + `:6: github.app.integrationID (KALYPSO_GITHUB_APP_INTEGRATION_ID): "abc" is not an integer`,
		path + `:7: queueSize (KALYPSO_QUEUE_SIZE): cannot unmarshal !!seq into int`,
	}, pe.Problems)

	path = writeFile(t, "server:\n  address: [\n")
	_, err = Load(path, validEnv(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+":")
}

func TestMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "absent.yml"), validEnv(nil))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestPrivateKeyFile(t *testing.T) {
	keyPath := filepath.Join(t.TempDir(), "key.pem")
	require.NoError(t, os.WriteFile(keyPath, []byte(testKey), 0o600))
	cfg, err := Load("", validEnv(map[string]string{
		"KALYPSO_GITHUB_APP_PRIVATE_KEY":      "",
		"KALYPSO_GITHUB_APP_PRIVATE_KEY_FILE": keyPath,
	}))
	require.NoError(t, err)
	gh, err := cfg.GitHubAppConfig()
	require.NoError(t, err)
	assert.Equal(t, testKey, gh.App.PrivateKey)
	assert.Equal(t, "s3cret", gh.App.WebhookSecret)
	assert.Equal(t, int64(42), gh.App.IntegrationID)
	assert.Equal(t, "https://api.github.com/", gh.V3APIURL)
	assert.Equal(t, "https://api.github.com/graphql", gh.V4APIURL)

	_, err = Load("", validEnv(map[string]string{"KALYPSO_GITHUB_APP_PRIVATE_KEY_FILE": keyPath}))
	assert.ErrorContains(t, err, "set only one of")
}

func TestSecretsAreRedacted(t *testing.T) {
	cfg, err := Load("", validEnv(nil))
	require.NoError(t, err)
	js, err := json.Marshal(cfg)
	require.NoError(t, err)
	for _, out := range []string{fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", *cfg), fmt.Sprintf("%#v", *cfg), string(js)} {
		assert.NotContains(t, out, "s3cret")
		assert.NotContains(t, out, "AAAA")
		assert.Contains(t, out, "[redacted]")
	}
}

func TestEnvName(t *testing.T) {
	for path, want := range map[string]string{
		"server.shutdownTimeout":   "KALYPSO_SERVER_SHUTDOWN_TIMEOUT",
		"server.managementAddress": "KALYPSO_SERVER_MANAGEMENT_ADDRESS",
		"server.readHeaderTimeout": "KALYPSO_SERVER_READ_HEADER_TIMEOUT",
		"server.maxHeaderBytes":    "KALYPSO_SERVER_MAX_HEADER_BYTES",
		"github.app.integrationID": "KALYPSO_GITHUB_APP_INTEGRATION_ID",
		"github.graphqlURL":        "KALYPSO_GITHUB_GRAPHQL_URL",
		"github.httpCacheMB":       "KALYPSO_GITHUB_HTTP_CACHE_MB",
		"queueSize":                "KALYPSO_QUEUE_SIZE",
	} {
		assert.Equal(t, want, EnvName(path), path)
	}
}

func TestDocsListEveryKey(t *testing.T) {
	docs, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	require.NoError(t, err)
	src, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	for _, k := range Keys() {
		for name, text := range map[string]string{"docs/configuration.md": string(docs), "doc.go": string(src)} {
			assert.True(t, strings.Contains(text, k.Path), "%s misses %s", name, k.Path)
			assert.True(t, strings.Contains(text, k.Env), "%s misses %s", name, k.Env)
		}
	}
}
