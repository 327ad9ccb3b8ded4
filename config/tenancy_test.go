package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestControlPlanesFromFileAndVariable(t *testing.T) {
	cfg, err := Load(writeFile(t, "controlPlanes: [my-org/platform-*, other/fleet]\n"), validEnv(nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"my-org/platform-*", "other/fleet"}, cfg.ControlPlanes)
	assert.True(t, cfg.IsControlPlane("my-org", "platform-eu"))
	assert.True(t, cfg.IsControlPlane("My-Org", "Platform-EU"), "GitHub names are case-insensitive")
	assert.True(t, cfg.IsControlPlane("other", "fleet"))
	assert.False(t, cfg.IsControlPlane("my-org", "app-svc"))
	assert.False(t, cfg.IsControlPlane("evil", "platform-eu"))

	cfg, err = Load("", validEnv(map[string]string{"KALYPSO_CONTROL_PLANES": " a/b , c/d-*,"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"a/b", "c/d-*"}, cfg.ControlPlanes)
}

func TestNoControlPlaneByDefault(t *testing.T) {
	cfg, err := Load("", validEnv(nil))
	require.NoError(t, err)
	assert.Empty(t, cfg.ControlPlanes)
	assert.False(t, cfg.IsControlPlane("any", "repo"), "control planes are declared, never discovered")
	assert.Equal(t, ByteSize(1<<30), cfg.Cache.MaxBytes)
	assert.Equal(t, ByteSize(4<<20), cfg.Sources.MaxFileBytes)
}

func TestBadControlPlanePattern(t *testing.T) {
	for _, pat := range []string{"platform", "a/b/c", "/b", "a/", "a/[x"} {
		_, err := Load("", validEnv(map[string]string{"KALYPSO_CONTROL_PLANES": pat}))
		require.Error(t, err, pat)
		assert.Contains(t, err.Error(), "controlPlanes (KALYPSO_CONTROL_PLANES)", pat)
	}
}

func TestByteSizes(t *testing.T) {
	for in, want := range map[string]ByteSize{"0": 0, "1048576": 1 << 20, "4Mi": 4 << 20, "1Gi": 1 << 30, "500M": 500e6, "2K": 2000} {
		got, err := ParseByteSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "-1", "4MB", "1.5Gi", "x", "99999999999Ti"} {
		_, err := ParseByteSize(in)
		assert.Error(t, err, in)
	}
	cfg, err := Load(writeFile(t, "cache:\n  maxBytes: 256Mi\nsources:\n  maxFileBytes: 1Mi\n"), validEnv(nil))
	require.NoError(t, err)
	assert.Equal(t, ByteSize(256<<20), cfg.Cache.MaxBytes)
	assert.Equal(t, ByteSize(1<<20), cfg.Sources.MaxFileBytes)

	_, err = Load(writeFile(t, "cache:\n  maxBytes: lots\n"), validEnv(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), ":2:")
	_, err = Load("", validEnv(map[string]string{"KALYPSO_SOURCES_MAX_FILE_BYTES": "0"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sources.maxFileBytes (KALYPSO_SOURCES_MAX_FILE_BYTES) must be positive")
}
