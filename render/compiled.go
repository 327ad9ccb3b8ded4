package render

import (
	"errors"
	"fmt"
	"strconv"
	"text/template"
	"text/template/parse"
)

// A compiled manifest is a template simple enough to run without text/template: only literal
// text and actions that print a field chain of the template data (`.Manifests.path`,
// `.ConfigData.A.B`), optionally passed to toYaml or stringify and piped into indent or
// nindent with a literal width. It writes the same bytes in the same writes through the same
// writer and calls the same bounded functions as text/template would. Anything it is not sure
// to do exactly as text/template (a missing field, a value of another type, a function's
// error) makes it give up: the caller then restores the budget and runs text/template.

// errNotCompiled makes a compiled manifest give up and leave the manifest to text/template.
var errNotCompiled = errors.New("not handled by the compiled manifest")

// compiledManifest is a manifest as a list of steps.
type compiledManifest []step

// step is a literal text, or an action printing a value.
type step struct {
	text  []byte
	field fieldChain // the value printed or given to fn
	fn    string     // "", "toYaml" or "stringify"
	pipe  string     // "", "indent" or "nindent"
	width int        // the width given to pipe
	slot  int        // where composed config keeps what a step with fn prints (see pipeSlots)
}

// fieldChain is a chain of field names below the template data.
type fieldChain []string

// simpleChain tells whether a field chain names a field of templateData and goes on only
// through its maps: at most one key below Labels and Manifests, any below ConfigData.
func simpleChain(ident []string) bool {
	switch ident[0] {
	case "DeploymentTargetName", "Namespace", "Environment", "Workspace", "Workload", "ClusterType":
		return len(ident) == 1
	case "Labels", "Manifests":
		return len(ident) <= 2
	case "ConfigData":
		return true
	}
	return false
}

// compileManifest returns the steps of a parsed manifest, or nil when it is not that simple.
func compileManifest(p *template.Template) compiledManifest {
	if p.Tree == nil || p.Tree.Root == nil || len(p.Templates()) != 1 {
		return nil
	}
	var out compiledManifest
	for _, n := range p.Tree.Root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			out = append(out, step{text: n.Text})
		case *parse.ActionNode:
			s, ok := compileAction(n.Pipe)
			if !ok {
				return nil
			}
			out = append(out, s)
		default:
			return nil
		}
	}
	return out
}

// compileAction compiles `{{ .A.B }}`, `{{ fn .A.B }}` and either piped into indent or nindent.
func compileAction(p *parse.PipeNode) (step, bool) {
	if p == nil || len(p.Decl) > 0 || len(p.Cmds) == 0 || len(p.Cmds) > 2 {
		return step{}, false
	}
	var s step
	args := p.Cmds[0].Args
	switch {
	case len(args) == 1:
	case len(args) == 2 && isIdentifier(args[0], "toYaml", "stringify"):
		s.fn, args = args[0].(*parse.IdentifierNode).Ident, args[1:]
	default:
		return step{}, false
	}
	f, ok := args[0].(*parse.FieldNode)
	if !ok || !simpleChain(f.Ident) {
		return step{}, false
	}
	s.field = fieldChain(f.Ident)
	if len(p.Cmds) == 1 {
		return s, true
	}
	pipe := p.Cmds[1].Args
	if s.fn == "" || len(pipe) != 2 || !isIdentifier(pipe[0], "indent", "nindent") {
		return step{}, false
	}
	num, ok := pipe[1].(*parse.NumberNode)
	if !ok || !num.IsInt || num.Int64 != int64(int(num.Int64)) {
		return step{}, false
	}
	s.pipe, s.width = pipe[0].(*parse.IdentifierNode).Ident, int(num.Int64)
	return s, true
}

func isIdentifier(n parse.Node, names ...string) bool {
	id, ok := n.(*parse.IdentifierNode)
	if !ok {
		return false
	}
	for _, name := range names {
		if id.Ident == name {
			return true
		}
	}
	return false
}

// run executes the compiled manifest for td, writing to the executor's output. It returns
// errNotCompiled, or any other error, when text/template must run the manifest instead. The
// deadline is checked once per manifest; the output budget is charged per step (see emit).
func (c compiledManifest) run(x *executor, td *templateData) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errNotCompiled, r)
		}
	}()
	if err := x.b.alive(); err != nil {
		return err
	}
	for i := range c {
		if err := c[i].run(x, td); err != nil {
			return err
		}
	}
	return nil
}

func (s *step) run(x *executor, td *templateData) error {
	if s.field == nil {
		return x.emitBytes(s.text)
	}
	if s.fn == "" {
		if str, found, ok := s.field.text(td); ok {
			return printString(x, str, found)
		}
	}
	v, found, err := s.field.value(td)
	if err != nil {
		return err
	}
	if s.fn == "" {
		return printValue(x, v, found)
	}
	if !found {
		v = nil
	}
	if c := x.e.config.lookup(v); c != nil {
		out, err := c.piped(s, &x.b)
		if err != nil {
			return err
		}
		return x.emit(out)
	}
	funcs := x.funcMap()
	out := funcs[s.fn].(func(any) string)(v)
	if s.pipe != "" {
		out = funcs[s.pipe].(func(int, string) string)(s.width, out)
	}
	return x.emit(out)
}

// emit appends s to the assignment's output, within its output budget, as the bounded
// writer text/template writes through does (without its check of the deadline, made once per
// manifest): a compiled manifest that goes beyond the budget gives up, and text/template
// reports the limit.
func (x *executor) emit(s string) error {
	if len(s) > x.b.output {
		return outputBytesError(x.b.limits)
	}
	x.b.output -= len(s)
	x.buf.WriteString(s)
	return nil
}

// emitBytes is emit for bytes.
func (x *executor) emitBytes(p []byte) error {
	if len(p) > x.b.output {
		return outputBytesError(x.b.limits)
	}
	x.b.output -= len(p)
	x.buf.Write(p)
	return nil
}

// text evaluates a chain whose value the template data holds as a string — a string field,
// or a key of Labels or Manifests — without boxing it in an interface; ok is false for any
// other chain, which value evaluates.
func (f fieldChain) text(td *templateData) (s string, found, ok bool) {
	if len(f) == 2 {
		switch f[0] {
		case "Labels":
			s, found = td.Labels[f[1]]
			return s, found, true
		case "Manifests":
			s, found = td.Manifests[f[1]]
			return s, found, true
		}
		return "", false, false
	}
	switch f[0] {
	case "DeploymentTargetName":
		return td.DeploymentTargetName, true, true
	case "Namespace":
		return td.Namespace, true, true
	case "Environment":
		return td.Environment, true, true
	case "Workspace":
		return td.Workspace, true, true
	case "Workload":
		return td.Workload, true, true
	case "ClusterType":
		return td.ClusterType, true, true
	}
	return "", false, false
}

// value evaluates the chain; found is false where text/template finds no value.
func (f fieldChain) value(td *templateData) (v any, found bool, err error) {
	switch f[0] {
	case "Labels":
		return stringMapValue(td.Labels, f[1:])
	case "Manifests":
		return stringMapValue(td.Manifests, f[1:])
	case "ConfigData":
		return anyMapValue(td.ConfigData, f[1:])
	}
	if s, _, ok := f.text(td); ok && len(f) == 1 {
		return s, true, nil
	}
	return nil, false, errNotCompiled
}

// stringMapValue is `.Map.key` for a map of strings.
func stringMapValue(m map[string]string, rest []string) (any, bool, error) {
	switch len(rest) {
	case 0:
		return m, true, nil
	case 1:
		v, ok := m[rest[0]]
		return v, ok, nil
	default:
		return nil, false, errNotCompiled
	}
}

// anyMapValue is `.Map.a.b…` for nested maps of any values; a missing key ends the chain
// with no value, anything but a map on the way is left to text/template.
func anyMapValue(m map[string]any, rest []string) (any, bool, error) {
	var v any = m
	for i, key := range rest {
		mm, ok := v.(map[string]any)
		if !ok || (mm == nil && i > 0) {
			return nil, false, errNotCompiled
		}
		if v, ok = mm[key]; !ok {
			if i == len(rest)-1 {
				return nil, false, nil
			}
			return nil, false, errNotCompiled
		}
	}
	return v, true, nil
}

// printString prints a string as text/template does: `<no value>` when there is none.
func printString(x *executor, s string, found bool) error {
	if !found {
		return x.emit("<no value>")
	}
	return x.emit(s)
}

// printValue prints v as text/template does for the values YAML and the template data hold:
// `<no value>` for none or nil, the value as fmt.Fprint prints it otherwise.
func printValue(x *executor, v any, found bool) error {
	var err error
	switch v := v.(type) {
	case nil:
		return x.emit("<no value>")
	case string:
		return printString(x, v, found)
	case bool:
		return x.emitBytes(strconv.AppendBool(x.scratch[:0], v))
	case int:
		return x.emitBytes(strconv.AppendInt(x.scratch[:0], int64(v), 10))
	case int64:
		return x.emitBytes(strconv.AppendInt(x.scratch[:0], v, 10))
	case uint64:
		return x.emitBytes(strconv.AppendUint(x.scratch[:0], v, 10))
	case float64, map[string]any, []any, map[string]string:
		_, err = fmt.Fprint(x.out, v)
	default:
		return errNotCompiled
	}
	return err
}
