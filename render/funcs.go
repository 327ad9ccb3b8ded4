// Package render turns the control-plane model into GitOps manifests:
// template functions, config composition and config validation.
package render

import (
	"fmt"
	"reflect"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/mitchellh/hashstructure"
	"go.yaml.in/yaml/v3"
)

// Private-use code points that stand in for template delimiters emitted by `literal`; see
// escape.go for the other escapes.
const (
	literalOpen  = "\uE000\uE000"
	literalClose = "\uE001\uE001"
)

// RemovedFuncs lists the sprig v3.3.0 functions that FuncMap leaves out because
// they read the environment, the clock, randomness, the local time zone or the network.
func RemovedFuncs() []string {
	return []string{
		// Environment.
		"env", "expandenv",
		// Network (DNS lookup, random pick among the answers).
		"getHostByName",
		// Clock, or the host's local time zone.
		"now", "ago", "date", "dateInZone", "date_in_zone", "htmlDate", "htmlDateInZone",
		"durationRound", "toDate", "mustToDate",
		// Randomness.
		"randAlpha", "randAlphaNum", "randAscii", "randNumeric", "randBytes", "randInt",
		"shuffle", "uuidv4",
		// Random keys, serial numbers, salts or IVs (certificates also read the clock).
		"genPrivateKey", "genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey",
		"genSignedCert", "genSignedCertWithKey", "encryptAES", "bcrypt", "htpasswd",
	}
}

// FuncMap returns a fresh function map: sprig's TxtFuncMap minus RemovedFuncs, plus toYaml, stringify, hash, unquote and literal.
func FuncMap() template.FuncMap {
	fm := sprig.TxtFuncMap()
	for _, name := range RemovedFuncs() {
		delete(fm, name)
	}
	fm["toYaml"] = ToYaml
	fm["stringify"] = Stringify
	fm["hash"] = Hash
	fm["unquote"] = Unquote
	fm["literal"] = Literal
	return fm
}

// ToYaml marshals v as YAML (4-space indent, sorted keys) without the final newline; "" on error.
func ToYaml(v any) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

// Stringify renders a map as YAML whose list and map values are replaced by their own YAML text; other values go through ToYaml.
func Stringify(v any) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map {
		return ToYaml(v)
	}
	out := make(map[any]any, rv.Len())
	iter := rv.MapRange()
	for iter.Next() {
		out[iter.Key().Interface()] = yamlTextIfComposite(iter.Value().Interface())
	}
	return ToYaml(out)
}

// yamlTextIfComposite returns the YAML text (final newline kept) of a list or map, and any other value unchanged.
func yamlTextIfComposite(v any) any {
	if !isComposite(v) {
		return v
	}
	data, err := yaml.Marshal(v)
	if err != nil {
		return v
	}
	return string(data)
}

// isComposite reports whether v is a map, or a slice or array other than []byte.
func isComposite(v any) bool {
	switch reflect.ValueOf(v).Kind() {
	case reflect.Map:
		return true
	case reflect.Slice, reflect.Array:
		_, isBytes := v.([]byte)
		return !isBytes
	default:
		return false
	}
}

// Hash returns the decimal FNV-based hash of v that the reference computes: hashstructure
// v1.1.0 Hash(v, nil), so that content-addressed names (`platform-config-{{ hash .ConfigData }}`)
// equal those existing GitOps repositories hold.
func Hash(v any) (string, error) {
	h, err := hashstructure.Hash(v, nil)
	if err != nil {
		return "", fmt.Errorf("hash: %w", err)
	}
	return fmt.Sprintf("%d", h), nil
}

// Unquote trims whitespace, then every `"`, then every `'` at both ends of a string; non-strings give "".
func Unquote(v any) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	s = strings.Trim(strings.TrimSpace(s), `"`)
	return strings.Trim(s, "'")
}

// Literal hides every `{{` and `}}` in s from further rendering passes (and escapes the
// private-use characters the placeholders are made of); RestoreLiterals brings them back.
func Literal(s string) string {
	return literalEscaper.Replace(s)
}

// RestoreLiterals turns the placeholders written by Literal, and the escapes of values that
// come from workload repositories, back into the original text; apply it once, after the
// last pass.
func RestoreLiterals(s string) string {
	return restorer.Replace(s)
}
