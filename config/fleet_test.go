package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFleetOffByDefault(t *testing.T) {
	c, err := Load("", validEnv(nil))
	require.NoError(t, err)
	assert.False(t, c.Fleet.Enabled)
	assert.False(t, c.Fleet.Badges)
	assert.Equal(t, 8*time.Hour, c.Fleet.SessionTTL.Std())
	assert.Equal(t, 15*time.Second, c.Fleet.RefreshInterval.Std())
}

func TestFleetEnabledNeedsSignInSettings(t *testing.T) {
	_, err := Load("", validEnv(map[string]string{"KALYPSO_FLEET_ENABLED": "true", "KALYPSO_FLEET_SESSION_KEY": "short"}))
	require.Error(t, err)
	for _, want := range []string{"fleet.publicURL (KALYPSO_FLEET_PUBLIC_URL)", "fleet.clientID (KALYPSO_FLEET_CLIENT_ID)",
		"fleet.clientSecret (KALYPSO_FLEET_CLIENT_SECRET)", "fleet.sessionKey (KALYPSO_FLEET_SESSION_KEY) must be at least 32 bytes"} {
		assert.Contains(t, err.Error(), want)
	}
	c, err := Load("", validEnv(map[string]string{"KALYPSO_FLEET_ENABLED": "true", "KALYPSO_FLEET_PUBLIC_URL": "https://kalypso.example.com",
		"KALYPSO_FLEET_CLIENT_ID": "Iv1.x", "KALYPSO_FLEET_CLIENT_SECRET": "s", "KALYPSO_FLEET_SESSION_KEY": strings.Repeat("k", 32),
		"KALYPSO_FLEET_BADGES": "true"}))
	require.NoError(t, err)
	assert.True(t, c.Fleet.Enabled)
	assert.True(t, c.Fleet.Badges)
	assert.NotContains(t, c.Fleet.SessionKey.String(), "kkkk", "the session key is a secret")
}

func TestFleetBadBoolean(t *testing.T) {
	_, err := Load("", validEnv(map[string]string{"KALYPSO_FLEET_BADGES": "yes please"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid boolean")
}
