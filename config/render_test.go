package config

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/render"
)

func TestRenderLimitsDefaultToTheRenderPackage(t *testing.T) {
	cfg, err := Load("", validEnv(nil))
	require.NoError(t, err)
	assert.Equal(t, render.DefaultLimits(), cfg.Render.Limits())
}

func TestRenderLimitsFromFileAndEnvironment(t *testing.T) {
	path := writeFile(t, "render:\n  maxAssignmentBytes: 1000\n  maxFunctionBytes: 2000\n  timeout: 5s\n")
	cfg, err := Load(path, validEnv(map[string]string{"KALYPSO_RENDER_MAX_LIST_LENGTH": "50"}))
	require.NoError(t, err)
	assert.Equal(t, render.Limits{MaxAssignmentBytes: 1000, MaxFunctionBytes: 2000, MaxListLength: 50, Timeout: 5 * time.Second}, cfg.Render.Limits())
}

func TestRenderLimitsMustBePositive(t *testing.T) {
	_, err := Load("", validEnv(map[string]string{
		"KALYPSO_RENDER_MAX_ASSIGNMENT_BYTES": "0",
		"KALYPSO_RENDER_MAX_FUNCTION_BYTES":   "-1",
		"KALYPSO_RENDER_MAX_LIST_LENGTH":      "0",
		"KALYPSO_RENDER_TIMEOUT":              "0",
	}))
	var ve *ValidationError
	require.True(t, errors.As(err, &ve), "%v", err)
	for _, want := range []string{
		"render.maxAssignmentBytes (KALYPSO_RENDER_MAX_ASSIGNMENT_BYTES) must be at least 1",
		"render.maxFunctionBytes (KALYPSO_RENDER_MAX_FUNCTION_BYTES) must be at least 1",
		"render.maxListLength (KALYPSO_RENDER_MAX_LIST_LENGTH) must be at least 1",
		"render.timeout (KALYPSO_RENDER_TIMEOUT) must be positive",
	} {
		assert.Contains(t, ve.Problems, want)
	}
}
