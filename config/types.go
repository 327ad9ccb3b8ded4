package config

import (
	"fmt"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration read from YAML as a Go duration ("30s", "5m", "1h30m") or as 0.
type Duration time.Duration

// Std returns the value as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats the duration like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML parses a scalar duration and reports the line of a bad value.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return typeError(n, "expected a duration such as 30s, 5m or 1h")
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return typeError(n, err.Error())
	}
	*d = v
	return nil
}

// ParseDuration parses a Go duration string; a bare integer is accepted only when it is 0.
func ParseDuration(s string) (Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n == 0 {
			return 0, nil
		}
		return 0, fmt.Errorf("invalid duration %q: add a unit, for example %ds", s, n)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (use a Go duration such as 30s, 5m or 1h)", s)
	}
	return Duration(v), nil
}

// typeError builds a yaml.TypeError so that it is reported with the other decoding errors.
func typeError(n *yaml.Node, msg string) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s", n.Line, msg)}}
}

// Secret is a string that never prints or marshals its value.
type Secret string

// redacted replaces a secret's value in any output.
const redacted = "[redacted]"

// String hides the value.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString hides the value from %#v.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// MarshalJSON hides the value from JSON output, including structured logs.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(s.String())), nil }

// MarshalYAML hides the value from YAML output.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// Value returns the secret itself; call it only where the secret is used.
func (s Secret) Value() string { return string(s) }
