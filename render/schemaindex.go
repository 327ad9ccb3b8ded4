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
}

func newSchemaIndex(snap *scheduling.Snapshot) *schemaIndex {
	idx := &schemaIndex{}
	for _, s := range snap.ConfigSchemas {
		cs := &compiledSchema{name: s.Name, labels: s.Labels, ref: s.Ref(),
			pos: scheduling.Pos{File: s.Pos.File, Line: s.Spec.Schema.Line}}
		cs.schema, cs.err = CompileSchema(s.Name, s.Spec.Schema.Value)
		idx.objects = append(idx.objects, cs)
	}
	for _, b := range snap.Broken {
		if b.Kind == scheduling.KindConfigSchema {
			idx.objects = append(idx.objects, &compiledSchema{name: b.Name, labels: b.Labels, pos: b.Pos, ref: b.Ref(),
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

// validate checks composed config against the schemas that apply to the assignment.
func (idx *schemaIndex) validate(a *scheduling.Assignment, cfg map[string]any, cfgKey string) *scheduling.Error {
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
		return withKey(v.(*scheduling.Error), a)
	}
	verdict := check(applied, cfg)
	idx.verdicts.Store(key.String(), verdict)
	return withKey(verdict, a)
}

func withKey(e *scheduling.Error, a *scheduling.Assignment) *scheduling.Error {
	if e == nil {
		return nil
	}
	c := *e
	c.Msg = fmt.Sprintf("config of %s: %s", a.Key(), e.Msg)
	return &c
}

func check(applied []*compiledSchema, cfg map[string]any) *scheduling.Error {
	var schemas []*Schema
	for _, cs := range applied {
		if cs.err != nil {
			return &scheduling.Error{Pos: cs.pos, Object: cs.ref, Msg: cs.err.Error()}
		}
		schemas = append(schemas, cs.schema)
	}
	err := ValidateConfig(cfg, schemas)
	if err == nil {
		return nil
	}
	at := applied[0]
	var ve *ConfigValidationError
	if errors.As(err, &ve) && len(ve.Violations) > 0 {
		for _, cs := range applied {
			if cs.name == ve.Violations[0].Schema {
				at = cs
				break
			}
		}
	}
	return &scheduling.Error{Pos: at.pos, Object: at.ref, Msg: oneLine(err.Error())}
}

// oneLine folds a multi-line message so that every error stays one `file:line: message` line.
func oneLine(msg string) string {
	msg = strings.ReplaceAll(msg, ":\n- ", ": ")
	return strings.ReplaceAll(strings.ReplaceAll(msg, "\n- ", "; "), "\n", "; ")
}
