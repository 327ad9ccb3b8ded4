// Package render turns scheduled assignments into manifests and an environment's GitOps tree.
package render

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// MaxNesting bounds how often template output containing `{{` is rendered again.
const MaxNesting = 8

// File names of an assignment's folder.
const (
	ReconcilerFile = "reconciler.yaml"
	NamespaceFile  = "namespace.yaml"
	ConfigFileYAML = "platform-config.yaml"
	ConfigFileSh   = "platform-config.sh"
)

// Engine renders the assignments of one snapshot. Templates are parsed and config sources
// prepared once; Render is safe for concurrent use.
type Engine struct {
	snap      *scheduling.Snapshot
	limits    Limits
	compiled  bool             // manifests simple enough run without text/template
	funcs     template.FuncMap // for parsing (see parseFuncs); executors bind their own bounded copies
	templates map[string]*compiledTemplate
	config    *configIndex
	slots     pipeSlots // the step kinds of compiled manifests that format composed config
	schemas   *schemaIndex
	expired   atomic.Bool // the deadline of the environment's rendering has passed
	verdicts  *placementVerdicts
	earlier   Outputs                                        // outputs of an earlier result, whose skeletons are tried first
	known     map[*scheduling.DeploymentTarget]*targetValues // escaped values an earlier result made; read only
	mu        sync.Mutex
	free      []*executor // executors not in use
}

// compiledTemplate is a Template with each manifest parsed, or the reason it cannot be used.
type compiledTemplate struct {
	id     int // its number in the engine, from 0
	tpl    *scheduling.Template
	parsed []*template.Template
	// mutates, per manifest, tells that it writes into a dict given to it (see mutates): it runs
	// on its own copy of the config data.
	mutates []bool
	plans   []compiledManifest // per manifest, nil where text/template runs it
	err     *scheduling.Error
}

// NewEngine prepares a snapshot for rendering. Templates that do not parse are reported when
// an assignment uses them.
func NewEngine(snap *scheduling.Snapshot, opts ...Option) *Engine {
	o := newOptions(opts)
	slots, sameSlots := o.composed.slotNumbering()
	e := &Engine{snap: snap, limits: o.limits, compiled: !o.textTemplate, templates: map[string]*compiledTemplate{}, slots: slots, schemas: newSchemaIndex(snap), verdicts: newPlacementVerdicts(), earlier: o.earlier, known: o.known}
	for name, t := range snap.Templates {
		e.templates[name] = e.compile(t, o.previous[name])
	}
	e.config = newConfigIndex(snap, len(e.slots), o.configValues, o.composed, sameSlots)
	for _, b := range snap.Broken {
		if b.Kind == scheduling.KindTemplate {
			e.templates[b.Name] = &compiledTemplate{err: &scheduling.Error{Pos: b.Pos, Object: b.Ref(), Msg: "assignments that use this template are not rendered until its errors are fixed"}}
		}
	}
	id := 0
	for _, t := range e.templates {
		t.id, id = id, id+1
	}
	return e
}

// parseFuncs returns the functions templates are parsed with: FuncMap's, under the names
// executors bind to their bounded versions. They are never called, and hold nothing of the
// engine, so that a parsed manifest can serve the engine of a later snapshot.
func parseFuncs() template.FuncMap {
	fm := FuncMap()
	fm[tickFunc] = func() string { return "" }
	return fm
}

// funcMap is FuncMap with toYaml and stringify of composed config data made once per Engine.
func (e *Engine) funcMap() template.FuncMap {
	fm := FuncMap()
	fm["toYaml"] = func(v any) string {
		if c := e.config.lookup(v); c != nil {
			return c.yaml()
		}
		return ToYaml(v)
	}
	fm["stringify"] = func(v any) string {
		if c := e.config.lookup(v); c != nil {
			return c.stringified()
		}
		return Stringify(v)
	}
	fm[tickFunc] = func() string { return "" }
	return fm
}

// compile parses the manifests of a template, or takes those of prev, the template of the
// same name compiled by an earlier engine, that have the same text, and compiles them.
func (e *Engine) compile(t *scheduling.Template, prev *compiledTemplate) *compiledTemplate {
	ct := &compiledTemplate{tpl: t}
	for i, m := range t.Spec.Manifests {
		p := prev.parsedText(i, m.Value)
		if p == nil {
			var err error
			if p, err = e.parse(manifestName(t.Name, i), m.Value); err != nil {
				ct.err = templateError(t, m, err)
				return ct
			}
		}
		ct.parsed = append(ct.parsed, p)
		ct.mutates = append(ct.mutates, mutates(p))
		var plan compiledManifest
		if e.compiled {
			plan = compileManifest(p)
			for i := range plan {
				if plan[i].fn != "" {
					plan[i].slot = e.slots.slot(pipeKey{plan[i].fn, plan[i].pipe, plan[i].width})
				}
			}
		}
		ct.plans = append(ct.plans, plan)
	}
	return ct
}

// parse parses a manifest, with the engine's parse functions (made on first use), as
// executors run it: missing keys print `<no value>`, loops check the deadline.
func (e *Engine) parse(name, text string) (*template.Template, error) {
	if e.funcs == nil {
		e.funcs = parseFuncs()
	}
	p, err := template.New(name).Funcs(e.funcs).Parse(text)
	if err != nil {
		return nil, err
	}
	p.Option("missingkey=default")
	addTicks(p)
	return p, nil
}

// parsedText returns the parsed manifest i of a compiled template when its text is text, else
// nil. A parsed manifest is never changed once made (executors run copies), so engines share it.
func (t *compiledTemplate) parsedText(i int, text string) *template.Template {
	if t == nil || t.err != nil || i >= len(t.parsed) || t.tpl.Spec.Manifests[i].Value != text {
		return nil
	}
	return t.parsed[i]
}

func manifestName(template string, i int) string { return fmt.Sprintf("%s[%d]", template, i) }

var tplErrLine = regexp.MustCompile(`^template: [^:]*:(\d+)(?::\d+)?: (.*)$`)

// templateError locates a text/template error in the Template's file.
func templateError(t *scheduling.Template, m scheduling.Text, err error) *scheduling.Error {
	msg := err.Error()
	line := m.Line
	if sm := tplErrLine.FindStringSubmatch(msg); sm != nil {
		n, _ := strconv.Atoi(sm[1])
		line, msg = m.Line+n-1, sm[2]
	}
	if line <= 0 {
		line = t.Pos.Line
	}
	return &scheduling.Error{Pos: scheduling.Pos{File: t.Pos.File, Line: line}, Object: t.Ref(), Msg: msg}
}

// templateData is what every template sees, exactly the reference's fields.
type templateData struct {
	DeploymentTargetName string
	Namespace            string
	Environment          string
	Workspace            string
	Workload             string
	Labels               map[string]string
	Manifests            map[string]string
	ClusterType          string
	ConfigData           map[string]any
}

// Render produces the files of one assignment's folder (file name → content), within the
// engine's function and output limits. The deadline (Limits.Timeout) runs while Environment or
// Incremental render with the engine.
func (e *Engine) Render(a *scheduling.Assignment) (Files, *scheduling.Error) {
	x := e.acquire()
	defer e.release(x)
	return x.render(a, a.Key())
}

// targetValues are the values of a deployment target as templates see them: they come from
// a workload repository, so each is escaped (see escape.go) and never executed as a template.
type targetValues struct {
	name, environment, workspace, workload string
	labels, manifests                      map[string]string
	placement                              *placement // nil when every value is inert
}

func newTargetValues(dt *scheduling.DeploymentTarget) *targetValues {
	return &targetValues{
		name:        untrusted(dt.Name),
		environment: untrusted(dt.Environment),
		workspace:   untrusted(dt.Labels["workspace"]),
		workload:    untrusted(dt.Labels["workload"]),
		labels:      untrustedMap(dt.Labels),
		manifests:   untrustedMap(dt.Manifests),
		placement:   newPlacement(dt.Manifests),
	}
}

// templateData is what the templates of an assignment see, valid until the executor's next
// assignment. A deployment target's escaped values are those an earlier result made, or made
// once per executor.
func (x *executor) templateData(a *scheduling.Assignment, data map[string]any) *templateData {
	tv := x.e.known[a.Target]
	if tv == nil {
		var ok bool
		if tv, ok = x.targets[a.Target]; !ok {
			tv = newTargetValues(a.Target)
			x.targets[a.Target] = tv
		}
	}
	x.tv = tv
	x.ownConfig = false
	x.td = templateData{
		DeploymentTargetName: tv.name,
		Namespace:            untrusted(a.Namespace()),
		Environment:          tv.environment,
		Workspace:            tv.workspace,
		Workload:             tv.workload,
		Labels:               tv.labels,
		Manifests:            tv.manifests,
		ClusterType:          a.ClusterType.Name,
		ConfigData:           data,
	}
	return &x.td
}

// targetValues returns the escaped values of every deployment target the engine's executors
// rendered, once they are all idle. The engine must not render afterwards: the map is made of
// the executors' own.
func (e *Engine) targetValues() map[*scheduling.DeploymentTarget]*targetValues {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out map[*scheduling.DeploymentTarget]*targetValues
	for _, x := range e.free {
		if len(x.targets) > len(out) {
			out = x.targets
		}
	}
	for _, x := range e.free {
		for dt, tv := range x.targets {
			if _, ok := out[dt]; !ok {
				out[dt] = tv
			}
		}
	}
	return out
}

// render renders one assignment, known as key, with the executor's templates and budget.
func (x *executor) render(a *scheduling.Assignment, key string) (Files, *scheduling.Error) {
	e, ct := x.e, a.ClusterType
	if err := x.b.alive(); err != nil {
		return Files{}, e.timeoutFailure(a)
	}
	x.b.reset()
	state := x.clusterType(ct)
	sel, composed, selKey := x.selection(state, a.Target)
	data, err := e.configFor(a, sel, composed, selKey)
	if err != nil {
		return Files{}, err
	}
	td := x.templateData(a, data)
	x.buf.Reset()
	x.spans = x.spans[:0]
	var ends [3]int // where each file ends in buf
	for i, r := range state.roles {
		if r.err != nil {
			return Files{}, r.err
		}
		if err := x.execute(r.tpl, td, a); err != nil {
			return Files{}, err
		}
		ends[i] = x.buf.Len()
	}
	config := state.roles[2].tpl
	shell := config.tpl.Spec.ContentType == "sh"
	if p := x.tv.placement; p != nil {
		if err := x.checkPlacement(a, td, p, shell); err != nil {
			return Files{}, err
		}
	}
	return x.files(a.Target, key, ends, shell), nil
}

// files are the assignment's output, the first ends[2] bytes of buf, as skeletons shared
// with the executor's other outputs and with the assignment's earlier output (see Files);
// ends are where each file ends.
func (x *executor) files(target *scheduling.DeploymentTarget, key string, ends [3]int, shell bool) Files {
	b := x.buf.Bytes()
	earlier := earlierOutput{outputs: x.e.earlier, key: key}
	return x.cut.files([3][]byte{b[:ends[0]], b[ends[0]:ends[1]], b[ends[1]:ends[2]]}, x.td.Namespace, shell, target, &earlier)
}

func (e *Engine) template(ct *scheduling.ClusterType, field, name string) (*compiledTemplate, *scheduling.Error) {
	t, ok := e.templates[name]
	if !ok {
		return nil, &scheduling.Error{Pos: ct.At(field), Object: ct.Ref(), Msg: fmt.Sprintf("%s: template %q does not exist", field, name)}
	}
	if t.err != nil {
		return nil, t.err
	}
	return t, nil
}

// separator joins the manifests of a template.
const separator = "---\n"

// execute renders every manifest of a template, drops empty ones and joins the rest with `---\n`,
// appending the file to buf.
func (x *executor) execute(t *compiledTemplate, td *templateData, a *scheduling.Assignment) *scheduling.Error {
	buf := &x.buf
	base := buf.Len()
	for i := range t.parsed {
		mark := buf.Len()
		if mark > base {
			if _, err := x.out.Write([]byte(separator)); err != nil {
				return manifestError(t, i, a, err)
			}
		}
		start := buf.Len()
		if err := x.executeNested(t, i, td); err != nil {
			return manifestError(t, i, a, err)
		}
		if buf.Len() == start {
			buf.Truncate(mark)
			start = mark
		}
		x.spans = append(x.spans, manifestSpan{t: t, i: i, start: start, end: buf.Len(), simple: x.lastCompiled && !x.lastNested})
	}
	return nil
}

// manifestError locates an error of manifest i of a template and names the assignment.
func manifestError(t *compiledTemplate, i int, a *scheduling.Assignment, err error) *scheduling.Error {
	se := templateError(t.tpl, t.tpl.Spec.Manifests[i], err)
	se.Msg = fmt.Sprintf("rendering %s: %s", a.Key(), se.Msg)
	return se
}

// executeNested executes manifest i of a template, appending to buf, then renders its output again while it
// contains `{{`, at most MaxNesting times, as the reference does without a bound. Every pass
// writes through the assignment's output budget.
func (x *executor) executeNested(t *compiledTemplate, i int, td *templateData) error {
	buf := &x.buf
	start := buf.Len()
	if err := x.executeFirst(t, i, td); err != nil {
		return err
	}
	if x.lastNested = needsMorePasses(buf.Bytes()[start:]); !x.lastNested {
		return nil
	}
	out := string(buf.Bytes()[start:])
	buf.Truncate(start)
	nestedBuf := &x.nested
	for pass := 1; strings.Contains(out, "{{"); pass++ {
		if pass > MaxNesting {
			return fmt.Errorf("output still contains `{{` after %d nested renderings; a value probably refers to itself (use the literal function to write `{{` verbatim)", MaxNesting)
		}
		nested, err := template.New(t.parsed[i].Name()).Funcs(x.funcMap()).Option("missingkey=default").Parse(out)
		if err != nil {
			return fmt.Errorf("nested rendering: %w", err)
		}
		addTicks(nested)
		nestedBuf.Reset()
		if mutates(nested) {
			x.takeOwnConfig()
		}
		if err := nested.Execute(x.nout, td); err != nil {
			return fmt.Errorf("nested rendering: %w", err)
		}
		out = nestedBuf.String()
	}
	buf.WriteString(RestoreLiterals(out))
	return nil
}

// executeFirst is the first pass of manifest i of a template: its compiled form if it has one
// and that succeeds, else text/template (the executor's copy of the manifest) from the same
// budget and output.
func (x *executor) executeFirst(t *compiledTemplate, i int, td *templateData) error {
	x.lastCompiled = false
	if t.mutates[i] {
		x.takeOwnConfig()
	}
	if plan := t.plans[i]; plan != nil && !x.ownConfig {
		left, output, start := x.b.left, x.b.output, x.buf.Len()
		if plan.run(x, td) == nil {
			x.ran++
			x.lastCompiled = true
			return nil
		}
		x.b.left, x.b.output = left, output
		x.buf.Truncate(start)
	}
	return x.parsed(t)[i].Execute(x.out, td)
}

// needsMorePasses tells whether output must be rendered again or has literals to restore.
func needsMorePasses(out []byte) bool {
	return bytes.Contains(out, []byte("{{")) || hasEscapes(out)
}
