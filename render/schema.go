package render

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled config JSON schema; it is immutable and safe for concurrent use.
type Schema struct {
	Name     string
	compiled *jsonschema.Schema
}

// Violation is one failed schema assertion on the config data.
type Violation struct {
	Schema   string
	Location string
	Message  string
}

// ConfigValidationError lists every violation found by ValidateConfig.
type ConfigValidationError struct {
	Violations []Violation
}

// Error returns "config data validation failed:" followed by one line per violation.
func (e *ConfigValidationError) Error() string {
	var b strings.Builder
	b.WriteString("config data validation failed:")
	for _, v := range e.Violations {
		fmt.Fprintf(&b, "\n- schema %q at %s: %s", v.Schema, v.Location, v.Message)
	}
	return b.String()
}

// refuseLoader refuses every external reference, so schemas never read files or the network.
type refuseLoader struct{}

// Load always fails.
func (refuseLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("external schema references are not allowed: %s", u)
}

// CompileSchema compiles a JSON schema document (draft-07 unless $schema says otherwise, formats asserted).
func CompileSchema(name, doc string) (*Schema, error) {
	parsed, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("schema must be JSON: %q: %w", name, err)
	}
	loc := "mem:///config-schemas/" + url.PathEscape(name) + ".json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(loc, parsed); err != nil {
		return nil, fmt.Errorf("schema %q: %w", name, err)
	}
	compiled, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("schema %q: %w", name, err)
	}
	return &Schema{Name: name, compiled: compiled}, nil
}

// ValidateConfig validates ValidationValues(data) against every schema and returns all violations as one *ConfigValidationError.
func ValidateConfig(data map[string]any, schemas []*Schema) error {
	values := ValidationValues(data)
	printer := message.NewPrinter(language.English)
	var all []Violation
	for _, s := range schemas {
		vs, err := s.violations(values, printer)
		if err != nil {
			return err
		}
		all = append(all, vs...)
	}
	if len(all) == 0 {
		return nil
	}
	return &ConfigValidationError{Violations: all}
}

// violations validates values and returns the leaf errors sorted by location and message.
func (s *Schema) violations(values map[string]any, p *message.Printer) ([]Violation, error) {
	err := s.compiled.Validate(values)
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, fmt.Errorf("schema %q: %w", s.Name, err)
	}
	var out []Violation
	collectLeaves(ve, s.Name, p, &out)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Location != out[j].Location {
			return out[i].Location < out[j].Location
		}
		return out[i].Message < out[j].Message
	})
	return out, nil
}

// collectLeaves appends one Violation per error without causes.
func collectLeaves(e *jsonschema.ValidationError, name string, p *message.Printer, out *[]Violation) {
	if len(e.Causes) == 0 {
		*out = append(*out, Violation{Schema: name, Location: instanceLocation(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(p)})
		return
	}
	for _, c := range e.Causes {
		collectLeaves(c, name, p, out)
	}
}

// instanceLocation formats a JSON pointer, "(root)" for the whole document.
func instanceLocation(tokens []string) string {
	if len(tokens) == 0 {
		return "(root)"
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}
