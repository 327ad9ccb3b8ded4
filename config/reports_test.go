package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHubDefaults(t *testing.T) {
	c, err := Load("", validEnv(nil))
	require.NoError(t, err)
	assert.Equal(t, StoreSQLite, c.Store.Driver)
	assert.Empty(t, c.Store.Path)
	assert.Equal(t, 30*24*time.Hour, c.Store.Retention.Std())
	assert.False(t, c.Reports.Enabled(), "no credential: no endpoint")
	assert.Equal(t, 5*time.Minute, c.Reports.MaxAge.Std())
	assert.Equal(t, 100000, c.Reports.MaxClustersPerEnvironment)
}

func TestReportCredentialsPerControlPlane(t *testing.T) {
	c, err := Load("", validEnv(map[string]string{
		"KALYPSO_REPORTS_SECRET":         "default-secret-0123",
		"KALYPSO_REPORTS_CONTROL_PLANES": `{"Org/Platform":{"secret":"platform-secret-01"},"org/other":{"bearerToken":"other-token-0123456"}}`,
	}))
	require.NoError(t, err)
	assert.True(t, c.Reports.Enabled())
	assert.Equal(t, "platform-secret-01", c.Reports.ReportCredentialsFor("org/platform").Secret.Value(), "names compare as GitHub does")
	assert.Equal(t, "default-secret-0123", c.Reports.ReportCredentialsFor("org/other").Secret.Value(), "the default fills what is not set")
	assert.Equal(t, "other-token-0123456", c.Reports.ReportCredentialsFor("org/other").BearerToken.Value())
	assert.Equal(t, "default-secret-0123", c.Reports.ReportCredentialsFor("org/unknown").Secret.Value())
	assert.NotContains(t, c.Reports.ReportCredentialsFor("org/platform").Secret.String(), "platform", "a secret never prints")
}

func TestReportSettingsFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte("store:\n  driver: postgres\n  url: postgres://k@db/k\nreports:\n  controlPlanes:\n    org/cp:\n      secret: a-long-enough-secret\n"), 0o600))
	c, err := Load(path, validEnv(nil))
	require.NoError(t, err)
	assert.Equal(t, StorePostgres, c.Store.Driver)
	assert.Equal(t, "a-long-enough-secret", c.Reports.ReportCredentialsFor("org/cp").Secret.Value())
}

func TestHubSettingProblemsNameTheSetting(t *testing.T) {
	_, err := Load("", validEnv(map[string]string{
		"KALYPSO_STORE_DRIVER":                         "mysql",
		"KALYPSO_STORE_RETENTION":                      "-1h",
		"KALYPSO_STORE_REPLICA_NAME":                   strings.Repeat("r", MaxReplicaName+1),
		"KALYPSO_REPORTS_SECRET":                       "short",
		"KALYPSO_REPORTS_MAX_AGE":                      "0",
		"KALYPSO_REPORTS_MAX_CLUSTERS_PER_ENVIRONMENT": "0",
		"KALYPSO_REPORTS_CONTROL_PLANES":               `{"not-a-repo":{"secret":"s"}}`,
	}))
	require.Error(t, err)
	for _, want := range []string{"store.driver (KALYPSO_STORE_DRIVER) must be sqlite or postgres", "store.retention",
		"store.replicaName (KALYPSO_STORE_REPLICA_NAME) must be at most 200 characters",
		"reports.secret (KALYPSO_REPORTS_SECRET) must be at least 16 bytes", "reports.maxAge", "reports.maxClustersPerEnvironment",
		`"not-a-repo" is not OWNER/REPO`} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = Load("", validEnv(map[string]string{"KALYPSO_STORE_DRIVER": "postgres"}))
	require.ErrorContains(t, err, "store.url (KALYPSO_STORE_URL) must be a postgres:// connection string")
	_, err = Load("", validEnv(map[string]string{"KALYPSO_REPORTS_CONTROL_PLANES": `{"org/cp":{"sekret":"x"}}`}))
	require.ErrorContains(t, err, "invalid JSON object")
	assert.False(t, strings.Contains(err.Error(), "sekret\":\"x"), "values are not echoed")
}
