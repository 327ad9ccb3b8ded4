package render

import (
	"bytes"
	"fmt"
	"text/template"

	"github.com/Masterminds/sprig/v3"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// executor renders one assignment at a time with its own copy of the templates, bound to
// functions that charge its own budget. An Engine keeps as many as run at once.
type executor struct {
	e       *Engine
	b       budget
	funcs   template.FuncMap       // see funcMap
	clones  [][]*template.Template // per compiledTemplate.id, this executor's copies of its manifests
	buf     bytes.Buffer           // the files of the assignment being rendered
	nested  bytes.Buffer           // the output of a nested pass
	out     *limitedWriter         // writes to buf
	nout    *limitedWriter         // writes to nested
	ran     int                    // manifests run compiled, for tests
	td      templateData           // what the assignment being rendered sees
	tv      *targetValues          // and the escaped values of its deployment target
	scratch [24]byte               // room for a number printed by a compiled manifest
	spans   []manifestSpan         // where each manifest of the assignment is in buf
	cut     *cutter                // makes and shares the skeletons of the outputs
	// lastCompiled and lastNested tell how the last manifest ran: compiled, and with nested passes.
	lastCompiled, lastNested bool
	// ownConfig tells that td.ConfigData is the assignment's own copy (see takeOwnConfig).
	ownConfig bool

	targets       map[*scheduling.DeploymentTarget]*targetValues // escaped values of the targets seen
	byClusterType map[*scheduling.ClusterType]*clusterTypeState  // see clusterType
	lastCT        *scheduling.ClusterType                        // the cluster type of the last assignment
	lastState     *clusterTypeState                              // and its state
	sel           []int                                          // the config entries of the assignment
}

// acquire returns an executor not in use, making one when all are busy.
func (e *Engine) acquire() *executor {
	e.mu.Lock()
	if n := len(e.free); n > 0 {
		x := e.free[n-1]
		e.free = e.free[:n-1]
		e.mu.Unlock()
		return x
	}
	e.mu.Unlock()
	x := &executor{e: e, b: budget{limits: e.limits, expired: &e.expired}, clones: make([][]*template.Template, len(e.templates)),
		targets: map[*scheduling.DeploymentTarget]*targetValues{}, byClusterType: map[*scheduling.ClusterType]*clusterTypeState{}, cut: newCutter()}
	x.out, x.nout = &limitedWriter{&x.buf, &x.b}, &limitedWriter{&x.nested, &x.b}
	return x
}

// release makes an executor available again.
func (e *Engine) release(x *executor) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.free = append(e.free, x)
}

// funcMap returns the executor's bounded functions (see boundedFuncMap), made when text/template
// first runs a manifest or a compiled one calls a function: an executor that runs only compiled
// manifests of composed config never makes them.
func (x *executor) funcMap() template.FuncMap {
	if x.funcs == nil {
		x.funcs = x.e.boundedFuncMap(&x.b)
	}
	return x.funcs
}

// parsed returns the executor's copies of a template's manifests, made on first use.
func (x *executor) parsed(t *compiledTemplate) []*template.Template {
	if out := x.clones[t.id]; out != nil {
		return out
	}
	out := make([]*template.Template, len(t.parsed))
	for i, p := range t.parsed {
		out[i] = template.Must(p.Clone()).Funcs(x.funcMap())
	}
	x.clones[t.id] = out
	return out
}

// boundedFuncMap is the engine's function map with every function bounded by b (see
// capFuncs), and bounded versions of the functions common templates call for every
// assignment (toYaml, stringify, dict, indent, nindent) that keep their single result: a
// second, error result costs an allocation per call. They report a breach by panicking with
// the error, which text/template turns into the error of the call (see mustNot).
func (e *Engine) boundedFuncMap(b *budget) template.FuncMap {
	fm := e.funcMap()
	capFuncs(fm, b)
	fm["toYaml"] = func(v any) string {
		return mustNot(e.serialize("toYaml", b, v, func(c *composedConfig) string { return c.yaml() }, ToYaml))
	}
	fm["stringify"] = func(v any) string {
		return mustNot(e.serialize("stringify", b, v, func(c *composedConfig) string { return c.stringified() }, Stringify))
	}
	fm[tickFunc] = func() string { return mustNot("", b.alive()) }
	c := capped{b}
	fm["indent"] = func(spaces int, s string) string { return mustNot(c.indent(spaces, s)) }
	fm["nindent"] = func(spaces int, s string) string { return mustNot(c.nindent(spaces, s)) }
	dict := sprig.TxtFuncMap()["dict"].(func(...any) map[string]any)
	fm["dict"] = func(kv ...any) map[string]any {
		if err := b.need("dict", uint64(sizeOf(kv, b.left))); err != nil {
			panic(err)
		}
		m := dict(kv...)
		return mustNot(m, b.charge("dict", m))
	}
	return fm
}

// mustNot returns v, or panics with err: text/template recovers a function's panic and
// reports it as the error of that call, wrapped so that errors.As still finds it.
func mustNot[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// serialize formats v with the composed config's cached text when v is composed config data,
// else with format after checking v's size; the text is charged to b.
func (e *Engine) serialize(fn string, b *budget, v any, cached func(*composedConfig) string, format func(any) string) (string, error) {
	if c := e.config.lookup(v); c != nil {
		s := cached(c)
		return s, b.spend(fn, len(s))
	}
	if err := b.need(fn, uint64(sizeOf(v, b.left))); err != nil {
		return "", err
	}
	s := format(v)
	return s, b.spend(fn, len(s))
}

// timeoutFailure is the error of an assignment not rendered before the deadline.
func (e *Engine) timeoutFailure(a *scheduling.Assignment) *scheduling.Error {
	ct := a.ClusterType
	return &scheduling.Error{Pos: ct.Pos, Object: ct.Ref(),
		Msg: fmt.Sprintf("rendering %s: not rendered: %v", a.Key(), timeoutError(e.limits))}
}
