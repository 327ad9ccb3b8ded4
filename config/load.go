package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load reads the YAML file at path (skipped when path is empty), applies the
// KALYPSO_* variables read through env (os.Getenv when nil) over it, fills the
// derived defaults and validates the result.
func Load(path string, env func(string) string) (*Config, error) {
	if env == nil {
		env = os.Getenv
	}
	cfg := Default(env)
	if path != "" {
		if err := cfg.loadFile(path); err != nil {
			return nil, err
		}
	}
	problems := cfg.applyEnv(env)
	cfg.applyDerived()
	problems = append(problems, cfg.problems()...)
	if len(problems) > 0 {
		return nil, &ValidationError{Source: path, Problems: problems}
	}
	return cfg, nil
}

// loadFile decodes the file at path over the current values.
func (c *Config) loadFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read config file: %w", err)
	}
	return c.decode(path, data)
}

// decode strictly decodes one YAML document; unknown keys are errors.
func (c *Config) decode(name string, data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fileError(name, keyLines(data), err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s:%d: only one YAML document is allowed", name, extra.Line)
	}
	return nil
}

// ParseError lists the problems of a configuration file, each as "file:line: message".
type ParseError struct {
	Problems []string // one "file:line: message" per problem
}

// Error joins the problems, one per line.
func (e *ParseError) Error() string {
	return "invalid configuration file:\n  " + strings.Join(e.Problems, "\n  ")
}

var (
	lineRE    = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownRE = regexp.MustCompile(`^field (\S+) not found in type config\.(\w+)$`)
)

// fileError rewrites yaml.v3 errors as "file:line: message" with key paths; keys maps a line
// to the path of the key whose value is on it.
func fileError(name string, keys map[int]string, err error) error {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, fileMessage(name, keys, m))
	}
	return &ParseError{Problems: out}
}

// fileMessage formats one yaml.v3 message.
func fileMessage(name string, keys map[int]string, msg string) string {
	m := lineRE.FindStringSubmatch(msg)
	if m == nil {
		return name + ": " + strings.TrimPrefix(msg, "yaml: ")
	}
	line, text := m[1], m[2]
	if u := unknownRE.FindStringSubmatch(text); u != nil {
		text = unknownKeyMessage(sectionPrefix(u[2]) + u[1])
	} else if n, err := strconv.Atoi(line); err == nil && keys[n] != "" {
		text = typeMessage(keys[n], text)
	}
	return fmt.Sprintf("%s:%s: %s", name, line, text)
}

// sectionPrefix maps a decoded struct type to the key path of its section.
func sectionPrefix(typeName string) string {
	switch typeName {
	case "App":
		return "github.app."
	case "GitHub":
		return "github."
	case "Config":
		return ""
	default:
		return strings.ToLower(typeName) + "."
	}
}

// unknownKeyMessage names an unknown key and suggests the closest known one.
func unknownKeyMessage(path string) string {
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s)) }
	for _, k := range Keys() {
		if norm(k.Path) == norm(path) {
			return fmt.Sprintf("unknown key %q (did you mean %q?)", path, k.Path)
		}
	}
	return fmt.Sprintf("unknown key %q", path)
}

// applyEnv applies the KALYPSO_* variables and returns the ones that do not parse.
func (c *Config) applyEnv(env func(string) string) []string {
	var problems []string
	for _, k := range Keys() {
		v := env(k.Env)
		if v == "" {
			continue
		}
		if err := k.set(c, v); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", k.Env, err))
		}
	}
	return problems
}
