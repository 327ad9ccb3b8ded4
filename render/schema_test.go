package render

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustCompile compiles a schema or fails the test.
func mustCompile(t testing.TB, name, doc string) *Schema {
	t.Helper()
	s, err := CompileSchema(name, doc)
	require.NoError(t, err)
	return s
}

func TestSchemaIntegerCoercion(t *testing.T) {
	s := mustCompile(t, "port", `{"type":"object","properties":{"PORT":{"type":"integer","minimum":1}}}`)
	assert.NoError(t, ValidateConfig(map[string]any{"PORT": "42"}, []*Schema{s}))
	assert.NoError(t, ValidateConfig(map[string]any{"PORT": "1e3"}, []*Schema{s}))
	assert.Error(t, ValidateConfig(map[string]any{"PORT": "4.5"}, []*Schema{s}))
	assert.Error(t, ValidateConfig(map[string]any{"PORT": "0"}, []*Schema{s}))
	assert.Error(t, ValidateConfig(map[string]any{"PORT": "forty-two"}, []*Schema{s}))
}

func TestSchemaBooleanStringFails(t *testing.T) {
	s := mustCompile(t, "flags", `{"type":"object","properties":{"ENABLED":{"type":"boolean"}}}`)
	err := ValidateConfig(map[string]any{"ENABLED": "true"}, []*Schema{s})
	require.Error(t, err)
	assert.Equal(t, "config data validation failed:\n- schema \"flags\" at /ENABLED: got string, want boolean", err.Error())
}

func TestSchemaNaNStaysString(t *testing.T) {
	s := mustCompile(t, "n", `{"properties":{"X":{"type":"number"}}}`)
	err := ValidateConfig(map[string]any{"X": "NaN"}, []*Schema{s})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/X: got string, want number")
	assert.NoError(t, ValidateConfig(map[string]any{"X": "2.5"}, []*Schema{s}))
}

func TestSchemaViolationMessageListsEverything(t *testing.T) {
	required := mustCompile(t, "required", `{"type":"object","required":["DATABASE_URL"]}`)
	types := mustCompile(t, "types", `{
		"type":"object",
		"properties":{
			"PORT":{"type":"integer"},
			"MODE":{"enum":["a","b"]},
			"HOSTS":{"type":"array","items":{"type":"string"}}
		}
	}`)
	data := map[string]any{"PORT": "http", "MODE": "c", "HOSTS": ParseConfigValue("[a, 1]")}
	err := ValidateConfig(data, []*Schema{required, types})
	require.Error(t, err)
	var ve *ConfigValidationError
	require.True(t, errors.As(err, &ve))
	assert.Len(t, ve.Violations, 4)
	want := "config data validation failed:\n" +
		"- schema \"required\" at (root): missing property 'DATABASE_URL'\n" +
		"- schema \"types\" at /HOSTS/1: got number, want string\n" +
		"- schema \"types\" at /MODE: value must be one of 'a', 'b'\n" +
		"- schema \"types\" at /PORT: got string, want integer"
	assert.Equal(t, want, err.Error())
}

func TestSchemaNestedValues(t *testing.T) {
	s := mustCompile(t, "db", `{"properties":{"DB":{"type":"object","properties":{"port":{"type":"integer"},"tls":{"type":"boolean"}},"additionalProperties":false}}}`)
	assert.NoError(t, ValidateConfig(map[string]any{"DB": ParseConfigValue("port: 5432\ntls: yes")}, []*Schema{s}))
	err := ValidateConfig(map[string]any{"DB": ParseConfigValue("port: '5432'\nextra: 1")}, []*Schema{s})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/DB/port: got string, want integer")
	assert.Contains(t, err.Error(), "at /DB: additional properties 'extra' not allowed")
}

func TestSchemaNoSchemasNoError(t *testing.T) {
	assert.NoError(t, ValidateConfig(map[string]any{"A": "1"}, nil))
}

func TestSchemaMustBeJSON(t *testing.T) {
	_, err := CompileSchema("yaml-schema", "type: object\nproperties:\n  A:\n    type: string\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "schema must be JSON: ")
	assert.Contains(t, err.Error(), `"yaml-schema"`)
}

func TestSchemaInvalidDocument(t *testing.T) {
	_, err := CompileSchema("bad", `{"type":"no-such-type"}`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `schema "bad"`)
	_, err = CompileSchema("trailing", `{} {}`)
	assert.ErrorContains(t, err, "schema must be JSON")
}

func TestSchemaExternalReferencesRefused(t *testing.T) {
	for _, ref := range []string{"file:///etc/hostname", "http://127.0.0.1:1/schema.json", "other.json"} {
		_, err := CompileSchema("ref", `{"$ref":"`+ref+`"}`)
		require.Error(t, err, ref)
		assert.Contains(t, err.Error(), "external schema references are not allowed", ref)
	}
	s := mustCompile(t, "local-ref", `{"definitions":{"p":{"type":"integer"}},"properties":{"P":{"$ref":"#/definitions/p"}}}`)
	assert.NoError(t, ValidateConfig(map[string]any{"P": "1"}, []*Schema{s}))
	assert.Error(t, ValidateConfig(map[string]any{"P": "x"}, []*Schema{s}))
}

func TestSchemaFormatsAsserted(t *testing.T) {
	s := mustCompile(t, "email", `{"properties":{"MAIL":{"type":"string","format":"email"}}}`)
	assert.NoError(t, ValidateConfig(map[string]any{"MAIL": "ops@example.com"}, []*Schema{s}))
	assert.Error(t, ValidateConfig(map[string]any{"MAIL": "nope"}, []*Schema{s}))
}

func TestSchemaConcurrentUse(t *testing.T) {
	s := mustCompile(t, "port", `{"properties":{"PORT":{"type":"integer"}},"required":["PORT"]}`)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				assert.NoError(t, ValidateConfig(map[string]any{"PORT": "8080"}, []*Schema{s}))
				assert.Error(t, ValidateConfig(map[string]any{}, []*Schema{s}))
			}
		}()
	}
	wg.Wait()
}
