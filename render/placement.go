package render

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"

	"github.com/kalypso-gitops/kalypso/internal/ellipsis"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Values of a workload repository's manifests are free text, as in the reference, and are
// written into the output exactly as text/template substitution writes them. What keeps them
// from changing the structure of the YAML they are written into is a check of where they land:
// each must be exactly one YAML scalar of the manifest that the template puts it in — no new
// key, document, list item, alias, anchor, tag or template action — and that scalar must read
// back as the template's text with the value in it. A value that cannot be placed so is an
// error on the assignment naming the value and the template's line; the assignment keeps its
// last good output.
//
// The check renders each manifest a second time with inert placeholders in place of the
// values, parses both outputs and compares them (see compareYAML). A value made only of
// characters that cannot change YAML wherever it is written (letters, digits and . _ / : @ +
// = ~ -, starting with a letter, digit, . _ or /, not ending with :) needs no check; a target
// whose values are all such costs nothing more.

// inert reports whether a value needs no placement check: it is made of letters, digits and
// . _ / : @ + = ~ -, starts with a letter, digit, . _ or /, does not end with : and does not
// start with ... — nothing in it starts or ends a YAML token, plain or quoted, in a block or a
// flow. An empty value is checked: in a flow list it leaves an empty item.
func inert(v string) bool {
	if v == "" || v[len(v)-1] == ':' || strings.HasPrefix(v, "...") || !plainStart(v[0]) {
		return false
	}
	for i := 1; i < len(v); i++ {
		if c := v[i]; !plainStart(c) && !strings.ContainsRune(":@+=~-", rune(c)) {
			return false
		}
	}
	return true
}

// plainStart tells whether a value may start with c: a letter, a digit, . _ or /.
func plainStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '/'
}

// placement is what checking a deployment target's values needs: its manifests as templates
// see them with a placeholder for every value that is not inert, and the values replaced.
type placement struct {
	manifests map[string]string // the target's manifests, checked values replaced by their tokens
	values    []checkedValue    // in key order
	restore   *strings.Replacer // token → value
	signature string            // the checked keys and values, as a key of verdicts
}

// checkedValue is a value whose placement is checked.
type checkedValue struct {
	key, value, token string
}

// placeholder is the token that stands for the i-th checked value: letters and digits only,
// ended by a letter no digit is followed by, so that no token is part of another.
func placeholder(i int) string { return "kalypsoValue" + strconv.Itoa(i) + "z" }

// newPlacement returns the placement check of a target's manifests, nil when every value is inert.
func newPlacement(manifests map[string]string) *placement {
	allInert := true
	for _, v := range manifests {
		allInert = allInert && inert(v)
	}
	if allInert {
		return nil
	}
	var values []checkedValue
	for _, k := range slices.Sorted(maps.Keys(manifests)) {
		if v := manifests[k]; !inert(v) {
			values = append(values, checkedValue{key: k, value: v, token: placeholder(len(values))})
		}
	}
	if len(values) == 0 {
		return nil
	}
	p := &placement{manifests: make(map[string]string, len(manifests))}
	for k, v := range manifests {
		p.manifests[k] = untrusted(v)
	}
	pairs := make([]string, 0, 2*len(values))
	var sig strings.Builder
	for _, cv := range values {
		p.manifests[cv.key] = cv.token
		pairs = append(pairs, cv.token, cv.value)
		fmt.Fprintf(&sig, "%q=%q;", cv.key, cv.value)
	}
	p.values, p.restore, p.signature = values, strings.NewReplacer(pairs...), sig.String()
	return p
}

// in returns the checked values whose tokens text holds, in the order they appear.
func (p *placement) in(text string) []checkedValue {
	type at struct {
		i  int
		cv checkedValue
	}
	var found []at
	for _, cv := range p.values {
		if i := strings.Index(text, cv.token); i >= 0 {
			found = append(found, at{i, cv})
		}
	}
	slices.SortFunc(found, func(a, b at) int { return a.i - b.i })
	out := make([]checkedValue, len(found))
	for i, f := range found {
		out[i] = f.cv
	}
	return out
}

// maxShownValue is how much of a refused value an error shows.
const maxShownValue = 60

// misplaced is a value that cannot be placed, and why.
type misplaced struct {
	value  checkedValue
	reason string
}

// error turns a misplaced value into the error of an assignment, at the line of the value in
// its deployment target's file (so that the workload's own check fails there), naming the
// template's line that writes it.
func (m *misplaced) error(t *compiledTemplate, i int, a *scheduling.Assignment) *scheduling.Error {
	tpl := t.tpl
	line := tpl.Spec.Manifests[i].Line
	if l := fieldLine(t.parsed[i], m.value.key); l > 0 {
		line += l - 1
	}
	if line <= 0 {
		line = tpl.Pos.Line
	}
	where := scheduling.Pos{File: tpl.Pos.File, Line: line}
	return &scheduling.Error{Pos: a.Target.At("spec.manifests." + m.value.key), Object: a.Target.Ref(),
		Msg: fmt.Sprintf("rendering %s: value %q of manifests.%s cannot be placed as one YAML scalar where %s at %s writes it: %s",
			a.Key(), ellipsis.Cut(m.value.value, maxShownValue), m.value.key, tpl.Ref(), where, m.reason)}
}

// fieldLine returns the line, within a manifest, of the first action that reads
// `.Manifests.<key>` (or `index .Manifests "<key>"`), else of the first that reads
// `.Manifests`; 0 when none does (the value came through config or a variable).
func fieldLine(p *template.Template, key string) int {
	if p == nil || p.Tree == nil {
		return 0
	}
	var exact, any parse.Node
	walkTemplate(p.Tree.Root, func(n parse.Node, ident []string, arg string) {
		if len(ident) == 0 || ident[0] != "Manifests" {
			return
		}
		if any == nil {
			any = n
		}
		if exact == nil && ((len(ident) > 1 && ident[1] == key) || arg == key) {
			exact = n
		}
	})
	if exact == nil {
		exact = any
	}
	if exact == nil {
		return 0
	}
	loc, _ := p.Tree.ErrorContext(exact)
	parts := strings.Split(loc, ":")
	if len(parts) < 3 {
		return 0
	}
	line, _ := strconv.Atoi(parts[len(parts)-2])
	return line
}

// walkTemplate calls visit for every field reference of a template tree with its field chain,
// and, for `index .X "k"`, the key given to index.
func walkTemplate(n parse.Node, visit func(n parse.Node, ident []string, arg string)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkTemplate(c, visit)
		}
	case *parse.ActionNode:
		walkTemplate(n.Pipe, visit)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walkTemplate(c, visit)
		}
	case *parse.CommandNode:
		if len(n.Args) == 3 && isIdentifier(n.Args[0], "index") {
			if f, ok := n.Args[1].(*parse.FieldNode); ok {
				if s, ok := n.Args[2].(*parse.StringNode); ok {
					visit(f, f.Ident, s.Text)
				}
			}
		}
		for _, a := range n.Args {
			walkTemplate(a, visit)
		}
	case *parse.FieldNode:
		visit(n, n.Ident, "")
	case *parse.ChainNode:
		walkTemplate(n.Node, visit)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, visit)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, visit)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, visit)
	case *parse.TemplateNode:
		walkTemplate(n.Pipe, visit)
	}
}

func walkBranch(b *parse.BranchNode, visit func(n parse.Node, ident []string, arg string)) {
	walkTemplate(b.Pipe, visit)
	walkTemplate(b.List, visit)
	walkTemplate(b.ElseList, visit)
}

// manifestSpan is where the output of manifest i of a template is in the executor's buffer.
type manifestSpan struct {
	t          *compiledTemplate
	i          int
	start, end int
	simple     bool // it ran compiled, without nested passes: its output is its steps'
}

// checkPlacement checks where the target's checked values land in each manifest of the
// assignment. A compiled manifest whose other steps print inert values is checked once per
// target (see skeleton); any other is rendered again with the placeholders, with a budget of
// its own, and both outputs compared.
func (x *executor) checkPlacement(a *scheduling.Assignment, td *templateData, p *placement, shell bool) *scheduling.Error {
	placed := *td
	placed.Manifests = p.manifests
	left, output := x.b.left, x.b.output
	defer func() { x.b.left, x.b.output = left, output }()
	configFile := len(x.spans) - len(x.spans[len(x.spans)-1].t.parsed)
	for n, s := range x.spans {
		isShell := shell && n >= configFile
		var quick *misplaced
		if s.simple {
			m, ok := x.e.verdicts.skeleton(s.t, s.i, td, p, isShell)
			if ok && m == nil {
				continue
			}
			quick = m // a refusal is checked again on the real output, for a message with its text
		}
		m := x.placedAgain(s, &placed, p, isShell)
		if m == nil {
			m = quick
		}
		if m != nil {
			return m.error(s.t, s.i, a)
		}
	}
	return nil
}

// placedAgain renders a manifest again with the placeholders, with a budget of its own, and
// compares both outputs.
func (x *executor) placedAgain(s manifestSpan, placed *templateData, p *placement, shell bool) *misplaced {
	x.b.reset()
	mark := x.buf.Len()
	defer x.buf.Truncate(mark)
	if err := x.executeNested(s.t, s.i, placed); err != nil {
		return &misplaced{value: p.values[0], reason: fmt.Sprintf("the template fails with a placeholder in its place, so where it goes cannot be checked (%v)", err)}
	}
	return x.e.verdicts.compare(x.buf.Bytes()[s.start:s.end], x.buf.Bytes()[mark:], p, shell)
}

// skeleton checks a compiled manifest that printed, for this assignment, nothing but the
// checked values and inert strings: since an inert string changes no YAML it is written into,
// its output has the structure of its skeleton — the steps' literal text, the checked values,
// and one inert token for every other step — which is the same for every cluster type the
// target is scheduled on. The verdict is kept per manifest and target values; ok is false when
// the manifest is not of that kind for this assignment.
func (v *placementVerdicts) skeleton(t *compiledTemplate, i int, td *templateData, p *placement, shell bool) (*misplaced, bool) {
	plan := t.plans[i]
	uses := false
	for _, s := range plan {
		if s.field == nil {
			continue
		}
		if s.field[0] == "Manifests" {
			uses = true
		}
		if s.fn != "" || (s.field[0] == "Manifests" && len(s.field) != 2) {
			return nil, false
		}
		if s.field[0] == "Manifests" && p.checked(s.field[1]) != nil {
			continue
		}
		if !printsInert(s.field, td) {
			return nil, false
		}
	}
	if !uses {
		return nil, true // the checked values are not written here
	}
	key := skeletonKey{t: t, i: i, values: p.signature}
	if m, ok := v.skeletons.Load(key); ok {
		return m.(*misplaced), true
	}
	var real, placed bytes.Buffer
	for n, s := range plan {
		switch cv := p.checkedStep(s); {
		case s.field == nil:
			real.Write(s.text)
			placed.Write(s.text)
		case cv != nil:
			real.WriteString(cv.value)
			placed.WriteString(cv.token)
		default:
			token := "kalypsoStep" + strconv.Itoa(n) + "z"
			real.WriteString(token)
			placed.WriteString(token)
		}
	}
	m := compareYAML(real.Bytes(), placed.Bytes(), p, shell)
	v.skeletons.Store(key, m)
	return m, true
}

// printsInert tells whether a chain's value is a string that is inert (see inert).
func printsInert(f fieldChain, td *templateData) bool {
	str, found, ok := f.text(td)
	if !ok {
		val, ok2, err := f.value(td)
		str, ok = val.(string)
		found = ok2 && err == nil
	}
	return ok && found && inert(str)
}

// skeletonKey identifies the skeleton verdict of a manifest for one target's checked values.
type skeletonKey struct {
	t      *compiledTemplate
	i      int
	values string
}

// checked returns the checked value of a key, or nil.
func (p *placement) checked(key string) *checkedValue {
	for i := range p.values {
		if p.values[i].key == key {
			return &p.values[i]
		}
	}
	return nil
}

// checkedStep returns the checked value a step prints, or nil.
func (p *placement) checkedStep(s step) *checkedValue {
	if s.field == nil || s.field[0] != "Manifests" || len(s.field) != 2 {
		return nil
	}
	return p.checked(s.field[1])
}

// placementVerdicts keeps the result of compareYAML by what it compared.
type placementVerdicts struct {
	seeds     [2]maphash.Seed
	known     sync.Map // [2]uint64 → *misplaced (nil: placed)
	skeletons sync.Map // skeletonKey → *misplaced
}

func newPlacementVerdicts() *placementVerdicts {
	return &placementVerdicts{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
}

// compare is compareYAML, computed once per distinct outputs, values and kind of file. The key
// is 128 bits of two hashes with random seeds, which no input can be made to collide with.
func (v *placementVerdicts) compare(real, placed []byte, p *placement, shell bool) *misplaced {
	if bytes.Equal(real, placed) {
		return nil
	}
	var key [2]uint64
	for i, seed := range v.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		h.Write(real)
		h.WriteByte(0)
		h.Write(placed)
		for _, cv := range p.values {
			h.WriteByte(0)
			h.WriteString(cv.key)
			h.WriteByte(0)
			h.WriteString(cv.value)
		}
		if shell {
			h.WriteByte(1)
		}
		key[i] = h.Sum64()
	}
	if m, ok := v.known.Load(key); ok {
		return m.(*misplaced)
	}
	m := compareYAML(real, placed, p, shell)
	v.known.Store(key, m)
	return m
}
