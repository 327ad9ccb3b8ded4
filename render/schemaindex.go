package render

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// schemaIndex holds the environment's ConfigSchemas, compiled once, and validation results.
type schemaIndex struct {
	objects  []*compiledSchema
	byText   sync.Map // name and text of a deployment target's schema → *compiledSchema
	verdicts sync.Map // config selection + schema set → *scheduling.Error (nil when valid)
}

// compiledSchema is a schema with its labels and position, or the reason it cannot be used.
type compiledSchema struct {
	name   string
	labels map[string]string
	pos    scheduling.Pos
	ref    string
	schema *Schema
	err    error
	object bool // a ConfigSchema, whose own errors are reported once, not per assignment
}

func newSchemaIndex(snap *scheduling.Snapshot) *schemaIndex {
	idx := &schemaIndex{}
	for _, s := range snap.ConfigSchemas {
		cs := &compiledSchema{name: s.Name, labels: s.Labels, ref: s.Ref(), object: true,
			pos: scheduling.Pos{File: s.Pos.File, Line: s.Spec.Schema.Line}}
		cs.schema, cs.err = CompileSchema(s.Name, s.Spec.Schema.Value)
		idx.objects = append(idx.objects, cs)
	}
	for _, b := range snap.Broken {
		if b.Kind == scheduling.KindConfigSchema {
			idx.objects = append(idx.objects, &compiledSchema{name: b.Name, labels: b.Labels, pos: b.Pos, ref: b.Ref(), object: true,
				err: errors.New("the ConfigSchema is invalid")})
		}
	}
	return idx
}

// forTarget compiles schema i of a deployment target once per target: targets of one workload
// share its schemas' text, but each is named, and its problems reported, at its own target.
func (idx *schemaIndex) forTarget(dt *scheduling.DeploymentTarget, i int, text string) *compiledSchema {
	name := fmt.Sprintf("%s.configSchemas[%d]", dt.Name, i)
	if cs, ok := idx.byText.Load(name + "\x00" + text); ok {
		return cs.(*compiledSchema)
	}
	cs := &compiledSchema{name: name, pos: dt.Pos, ref: dt.Ref()}
	cs.schema, cs.err = CompileSchema(name, text)
	actual, _ := idx.byText.LoadOrStore(name+"\x00"+text, cs)
	return actual.(*compiledSchema)
}

// locator finds where the value of a top-level config key was written.
type locator func(key string) (*scheduling.ConfigMap, scheduling.Pos)

// validate checks composed config against the schemas that apply to the assignment. A
// violation of a value is reported at the ConfigMap key that gave it, naming the schema; one
// of the whole config (a missing key) at the schema.
func (idx *schemaIndex) validate(a *scheduling.Assignment, cfg map[string]any, cfgKey string, locate locator) *scheduling.Error {
	ct, dt := a.ClusterType, a.Target
	if len(idx.objects) == 0 && len(dt.ConfigSchemas) == 0 {
		return nil
	}
	var applied []*compiledSchema
	var key strings.Builder
	key.WriteString(cfgKey)
	for i, cs := range idx.objects {
		if LabelsMatch(cs.labels, ct.Name, ct.Labels, dt.Name, dt.Labels) {
			applied = append(applied, cs)
			fmt.Fprintf(&key, "|o%d", i)
		}
	}
	for i, text := range dt.ConfigSchemas {
		applied = append(applied, idx.forTarget(dt, i, text))
		fmt.Fprintf(&key, "|t%s[%d]%s", dt.Name, i, text)
	}
	if len(applied) == 0 {
		return nil
	}
	if v, ok := idx.verdicts.Load(key.String()); ok {
		return withKey(v.(scheduling.Errors), a)
	}
	verdict := check(applied, cfg, locate)
	idx.verdicts.Store(key.String(), verdict)
	return withKey(verdict, a)
}

// withKey names the assignment in a verdict's messages: the first problem, with the others.
func withKey(verdict scheduling.Errors, a *scheduling.Assignment) *scheduling.Error {
	if len(verdict) == 0 {
		return nil
	}
	out := make(scheduling.Errors, len(verdict))
	for i, e := range verdict {
		c := *e
		c.Msg = fmt.Sprintf("config of %s: %s", a.Key(), e.Msg)
		out[i] = &c
	}
	out[0].Also = out[1:]
	return out[0]
}

// check validates cfg against the schemas: nothing when it is valid, else every problem, the
// violations of values at the ConfigMap keys that gave them, those of the whole config at the
// schema (all of them in one problem).
func check(applied []*compiledSchema, cfg map[string]any, locate locator) scheduling.Errors {
	var schemas []*Schema
	byName := map[string]*compiledSchema{}
	for _, cs := range applied {
		if cs.err != nil {
			msg := cs.err.Error()
			if cs.object {
				msg = "cannot be validated: this ConfigSchema is invalid"
			}
			return scheduling.Errors{{Pos: cs.pos, Object: cs.ref, Msg: oneLine(msg)}}
		}
		schemas = append(schemas, cs.schema)
		byName[cs.name] = cs
	}
	err := ValidateConfig(cfg, schemas)
	var ve *ConfigValidationError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &ve) || len(ve.Violations) == 0:
		return scheduling.Errors{{Pos: applied[0].pos, Object: applied[0].ref, Msg: oneLine(err.Error())}}
	}
	var out scheduling.Errors
	whole := &ConfigValidationError{}
	for _, v := range ve.Violations {
		cs := byName[v.Schema]
		if cm, at := locate(topKey(v.Location)); cm != nil && cs != nil {
			out = append(out, &scheduling.Error{Pos: at, Object: cm.Ref(),
				Msg: oneLine(fmt.Sprintf("value at %s violates %s (%s): %s", v.Location, cs.ref, cs.pos, v.Message))})
			continue
		}
		whole.Violations = append(whole.Violations, v)
	}
	if len(whole.Violations) > 0 {
		at := applied[0]
		if cs := byName[whole.Violations[0].Schema]; cs != nil {
			at = cs
		}
		out = append(scheduling.Errors{{Pos: at.pos, Object: at.ref, Msg: oneLine(whole.Error())}}, out...)
	}
	return out
}

// topKey is the top-level config key of a violation's location ("/A/b" gives "A"), "" for the
// whole config.
func topKey(location string) string {
	if !strings.HasPrefix(location, "/") {
		return ""
	}
	first, _, _ := strings.Cut(location[1:], "/")
	return strings.ReplaceAll(strings.ReplaceAll(first, "~1", "/"), "~0", "~")
}

// oneLine folds a multi-line message so that every error stays one `file:line: message` line.
func oneLine(msg string) string {
	msg = strings.ReplaceAll(msg, ":\n- ", ": ")
	return strings.ReplaceAll(strings.ReplaceAll(msg, "\n- ", "; "), "\n", "; ")
}
