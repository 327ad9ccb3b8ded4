package render

import (
	"fmt"
	"maps"
	"math/bits"
	"reflect"
	"strconv"
	"strings"
	"text/template"
	"unicode/utf8"
)

// CappedFuncs lists the functions whose output size an argument chooses (a count, a width, a
// separator or replacement repeated per element or match). Each checks, before it allocates,
// that its output fits the assignment's budget: until, untilStep and seq against
// render.maxListLength, the others against render.maxFunctionBytes. Every other function
// that returns a string, list or map has its result charged to render.maxFunctionBytes (and
// its length checked against render.maxListLength) after the call, and every function checks
// the environment's deadline (render.timeout).
func CappedFuncs() []string {
	return []string{
		"until", "untilStep", "seq", "repeat", "indent", "nindent", "wrap", "wrapWith", "replace",
		"regexReplaceAll", "regexReplaceAllLiteral", "mustRegexReplaceAll", "mustRegexReplaceAllLiteral",
		"join", "printf",
	}
}

// capFuncs makes fm bounded by b: the functions of CappedFuncs are replaced by versions that
// check their size first, every other function is wrapped so that it checks the deadline and
// pays for what it returns, and the builtins that copy their arguments (print, println,
// html, js, urlquery) are replaced by versions that do.
func capFuncs(fm template.FuncMap, b *budget) {
	orig := maps.Clone(fm)
	for name, fn := range fm {
		fm[name] = wrapFunc(name, fn, b)
	}
	fm["print"] = wrapFunc("print", fmt.Sprint, b)
	fm["println"] = wrapFunc("println", fmt.Sprintln, b)
	fm["html"] = wrapFunc("html", template.HTMLEscaper, b)
	fm["js"] = wrapFunc("js", template.JSEscaper, b)
	fm["urlquery"] = wrapFunc("urlquery", template.URLQueryEscaper, b)
	c := capped{b}
	fm["until"] = c.until
	fm["untilStep"] = c.untilStep
	fm["seq"] = c.seq
	fm["repeat"] = c.repeat
	fm["indent"] = c.indent
	fm["nindent"] = c.nindent
	fm["wrap"] = c.wrap(orig["wrap"])
	fm["wrapWith"] = c.wrapWith(orig["wrapWith"])
	fm["replace"] = c.replace
	fm["join"] = c.join(orig["join"])
	fm["printf"] = c.printf
	for _, name := range []string{"regexReplaceAll", "regexReplaceAllLiteral", "mustRegexReplaceAll", "mustRegexReplaceAllLiteral"} {
		fm[name] = c.regexReplace(name, orig[name])
	}
}

// capped holds the functions whose output size an argument chooses.
type capped struct{ b *budget }

func (c capped) until(count int) ([]int, error) {
	step := 1
	if count < 0 {
		step = -1
	}
	return c.steps("until", 0, count, step)
}

func (c capped) untilStep(start, stop, step int) ([]int, error) {
	return c.steps("untilStep", start, stop, step)
}

// steps is sprig's untilStep, counted first and safe from integer overflow.
func (c capped) steps(fn string, start, stop, step int) ([]int, error) {
	n := stepCount(start, stop, step)
	if err := c.b.count(fn, n); err != nil {
		return nil, err
	}
	if err := c.b.spend(fn, int(n)*8); err != nil {
		return nil, err
	}
	v := make([]int, n)
	for i := range v {
		v[i] = start + i*step
	}
	return v, nil
}

// stepCount is how many values sprig's untilStep(start, stop, step) makes.
func stepCount(start, stop, step int) uint64 {
	switch {
	case stop < start && step < 0:
		return ceilDiv(uint64(start)-uint64(stop), uint64(-step))
	case stop > start && step > 0:
		return ceilDiv(uint64(stop)-uint64(start), uint64(step))
	}
	return 0
}

func ceilDiv(a, b uint64) uint64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// seq is sprig's seq over capped steps.
func (c capped) seq(params ...int) (string, error) {
	var start, stop, step int
	switch len(params) {
	case 1:
		start, stop, step = 1, params[0]+1, 1
		if params[0] < 1 {
			stop, step = params[0]-1, -1
		}
	case 2:
		start, stop, step = params[0], params[1]+1, 1
		if params[1] < params[0] {
			stop, step = params[1]-1, -1
		}
	case 3:
		start, stop, step = params[0], params[2]+1, params[1]
		if params[2] < params[0] {
			if params[1] > 0 {
				return "", nil
			}
			stop = params[2] - 1
		}
	default:
		return "", nil
	}
	v, err := c.steps("seq", start, stop, step)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for i, x := range v {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strconv.Itoa(x))
	}
	return sb.String(), c.b.spend("seq", sb.Len())
}

func (c capped) repeat(count int, s string) (string, error) {
	if count < 0 {
		return "", fmt.Errorf("repeat: negative count %d", count)
	}
	if err := c.b.need("repeat", mulSize(uint64(count), uint64(len(s)))); err != nil {
		return "", err
	}
	out := strings.Repeat(s, count)
	return out, c.b.spend("repeat", len(out))
}

func (c capped) indent(spaces int, s string) (string, error) {
	return c.indentWith("indent", "", spaces, s)
}

func (c capped) nindent(spaces int, s string) (string, error) {
	return c.indentWith("nindent", "\n", spaces, s)
}

// indentWith is sprig's indent (nindent with prefix "\n"), its size checked first.
func (c capped) indentWith(fn, prefix string, spaces int, s string) (string, error) {
	if spaces < 0 {
		return "", fmt.Errorf("%s: negative count %d", fn, spaces)
	}
	if err := c.b.need(fn, indentedSize(prefix, spaces, s)); err != nil {
		return "", err
	}
	out := indentText(prefix, spaces, s)
	return out, c.b.spend(fn, len(out))
}

func (c capped) wrap(orig any) func(int, string) (string, error) {
	f := orig.(func(int, string) string)
	return func(l int, s string) (string, error) {
		if err := c.b.need("wrap", addSize(uint64(len(s)), uint64(len(s))+1)); err != nil {
			return "", err
		}
		out := f(l, s)
		return out, c.b.spend("wrap", len(out))
	}
}

func (c capped) wrapWith(orig any) func(int, string, string) (string, error) {
	f := orig.(func(int, string, string) string)
	return func(l int, sep, s string) (string, error) {
		if err := c.b.need("wrapWith", addSize(uint64(len(s)), mulSize(uint64(len(s))+1, uint64(len(sep))))); err != nil {
			return "", err
		}
		out := f(l, sep, s)
		return out, c.b.spend("wrapWith", len(out))
	}
}

func (c capped) replace(old, repl, src string) (string, error) {
	n := uint64(strings.Count(src, old))
	if old == "" {
		n = uint64(utf8.RuneCountInString(src)) + 1
	}
	if err := c.b.need("replace", addSize(uint64(len(src)), mulSize(n, uint64(len(repl))))); err != nil {
		return "", err
	}
	out := strings.ReplaceAll(src, old, repl)
	return out, c.b.spend("replace", len(out))
}

// regexReplace bounds a regexReplaceAll function: at most one replacement per byte of the
// input and one more, each at most the replacement plus, per `$`, a match.
func (c capped) regexReplace(name string, orig any) any {
	call := func(re, s, repl string) (string, error) {
		per := addSize(uint64(len(repl)), mulSize(uint64(strings.Count(repl, "$")), uint64(len(s))))
		if err := c.b.need(name, addSize(uint64(len(s)), mulSize(uint64(len(s))+1, per))); err != nil {
			return "", err
		}
		var out string
		switch f := orig.(type) {
		case func(string, string, string) string:
			out = f(re, s, repl)
		case func(string, string, string) (string, error):
			var err error
			if out, err = f(re, s, repl); err != nil {
				return "", err
			}
		}
		return out, c.b.spend(name, len(out))
	}
	return call
}

// join bounds sprig's join: the elements plus the separator once per element.
func (c capped) join(orig any) func(string, any) (string, error) {
	f := orig.(func(string, any) string)
	return func(sep string, v any) (string, error) {
		n := uint64(lengthOf(v))
		if err := c.b.need("join", addSize(uint64(sizeOf(v, c.b.left)), mulSize(n, uint64(len(sep))))); err != nil {
			return "", err
		}
		out := f(sep, v)
		return out, c.b.spend("join", len(out))
	}
}

// printf is the builtin printf with its widths and precisions checked first.
func (c capped) printf(format string, args ...any) (string, error) {
	size := addSize(uint64(len(format)), uint64(sizeOf(args, c.b.left)))
	size = addSize(size, formatWidths(format, args))
	if err := c.b.need("printf", size); err != nil {
		return "", err
	}
	out := fmt.Sprintf(format, args...)
	return out, c.b.spend("printf", len(out))
}

// formatWidths sums the widths and precisions a format asks for, `*` ones included, so that
// printf "%999999999d" is refused before fmt pads.
func formatWidths(format string, args []any) uint64 {
	var total uint64
	num, inVerb := uint64(0), false
	for i := 0; i < len(format); i++ {
		ch := format[i]
		switch {
		case !inVerb:
			inVerb = ch == '%'
		case ch >= '0' && ch <= '9':
			num = addSize(mulSize(num, 10), uint64(ch-'0'))
		case ch == '*':
			for _, a := range args {
				if n, ok := a.(int); ok && n > 0 {
					total = addSize(total, uint64(n))
				}
			}
		case ch == '.' || ch == '+' || ch == '-' || ch == '#' || ch == ' ' || ch == '[' || ch == ']':
			total, num = addSize(total, num), 0
		default:
			total, num, inVerb = addSize(total, num), 0, false
		}
	}
	return total
}

// mulSize multiplies sizes, saturating instead of overflowing.
func mulSize(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return ^uint64(0)
	}
	return lo
}

// addSize adds sizes, saturating instead of overflowing.
func addSize(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return ^uint64(0)
	}
	return s
}

var errorType = reflect.TypeFor[error]()

// wrapFunc wraps any template function: it checks the deadline, and when it returns a string,
// list, map or any value, it checks that its arguments fit what is left of the budget before
// the call and charges its result after.
func wrapFunc(name string, fn any, b *budget) any {
	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func || t.NumOut() == 0 {
		return fn // text/template refuses it anyway
	}
	makes := makesData(t.Out(0))
	outs := []reflect.Type{t.Out(0), errorType}
	wt := reflect.FuncOf(inTypes(t), outs, t.IsVariadic())
	return reflect.MakeFunc(wt, func(args []reflect.Value) []reflect.Value {
		fail := func(err error) []reflect.Value {
			return []reflect.Value{reflect.Zero(outs[0]), reflect.ValueOf(&err).Elem()}
		}
		if err := b.alive(); err != nil {
			return fail(err)
		}
		if makes {
			if err := b.need(name, uint64(argsSize(args, b.left))); err != nil {
				return fail(err)
			}
		}
		res := callValue(v, args, t.IsVariadic())
		if len(res) == 2 && !res[1].IsNil() {
			return fail(res[1].Interface().(error))
		}
		if makes {
			if err := b.charge(name, res[0].Interface()); err != nil {
				return fail(err)
			}
		}
		return []reflect.Value{res[0], reflect.Zero(errorType)}
	}).Interface()
}

func callValue(v reflect.Value, args []reflect.Value, variadic bool) []reflect.Value {
	if variadic {
		return v.CallSlice(args)
	}
	return v.Call(args)
}

func inTypes(t reflect.Type) []reflect.Type {
	in := make([]reflect.Type, t.NumIn())
	for i := range in {
		in[i] = t.In(i)
	}
	return in
}

// makesData reports whether a function result can hold text: strings, lists, maps, any.
func makesData(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Interface, reflect.Array, reflect.Pointer, reflect.Struct:
		return true
	}
	return false
}

func argsSize(args []reflect.Value, limit int) int {
	n := 0
	for _, a := range args {
		n += sizeOf(a.Interface(), limit-n)
		if n > limit {
			break
		}
	}
	return n
}
