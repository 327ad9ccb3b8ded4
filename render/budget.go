package render

import (
	"bytes"
	"fmt"
	"reflect"
	"sync/atomic"
)

// maxValueDepth is how deep sizeOf looks into nested lists and maps; deeper (a map that
// contains itself) counts as larger than any budget.
const maxValueDepth = 1000

// budget is what the assignment being rendered by one executor may still spend. It is reset
// before each assignment; the deadline flag is shared by every executor of an environment.
type budget struct {
	limits  Limits
	expired *atomic.Bool // set when the environment's deadline has passed
	left    int          // bytes template functions may still make
	output  int          // bytes of output the assignment may still write
}

func (b *budget) reset() {
	b.left, b.output = b.limits.MaxFunctionBytes, b.limits.MaxAssignmentBytes
}

// alive returns the timeout error once the environment's deadline has passed.
func (b *budget) alive() error {
	if b.expired != nil && b.expired.Load() {
		return timeoutError(b.limits)
	}
	return nil
}

// spend charges n bytes made by function fn.
func (b *budget) spend(fn string, n int) error {
	if err := b.alive(); err != nil {
		return err
	}
	if n > b.left {
		return functionBytesError(fmt.Sprintf("%s would make %s (%d bytes left of the assignment's budget)", fn, sizeText(n), b.left), b.limits)
	}
	b.left -= n
	return nil
}

// need checks, before fn allocates, that n bytes are still available.
func (b *budget) need(fn string, n uint64) error {
	if err := b.alive(); err != nil {
		return err
	}
	if n > uint64(b.left) {
		return functionBytesError(fmt.Sprintf("%s would make %s (%d bytes left of the assignment's budget)", fn, sizeText64(n), b.left), b.limits)
	}
	return nil
}

// count checks the number of elements fn would make.
func (b *budget) count(fn string, n uint64) error {
	if err := b.alive(); err != nil {
		return err
	}
	if n > uint64(b.limits.MaxListLength) {
		return listLimitError(fmt.Sprintf("%s would make %d elements", fn, n), b.limits)
	}
	return nil
}

// charge checks the length of a list or map fn returned and charges its size.
func (b *budget) charge(fn string, v any) error {
	if n := lengthOf(v); n > b.limits.MaxListLength {
		return listLimitError(fmt.Sprintf("%s made %d elements", fn, n), b.limits)
	}
	return b.spend(fn, sizeOf(v, b.left))
}

func sizeText(n int) string      { return fmt.Sprintf("%d bytes", n) }
func sizeText64(n uint64) string { return fmt.Sprintf("%d bytes", n) }

// lengthOf is the number of elements of a list or map, 0 for anything else.
func lengthOf(v any) int {
	switch x := v.(type) {
	case string, nil:
		return 0
	case []any:
		return len(x)
	case []string:
		return len(x)
	case map[string]any:
		return len(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array:
		return rv.Len()
	}
	return 0
}

// sizeOf estimates the bytes of v as text: strings count their length, lists and maps their
// elements plus a few bytes each. It stops counting once over limit (so a huge or cyclic
// value costs little to measure) and returns a number over limit then.
func sizeOf(v any, limit int) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case map[string]string:
		n := 0
		for k, v := range x {
			n += 4 + len(k) + len(v)
		}
		return n
	}
	s := sizer{limit: limit}
	s.add(reflect.ValueOf(v), 0)
	return s.n
}

type sizer struct{ n, limit int }

func (s *sizer) over() bool { return s.n > s.limit }

func (s *sizer) add(v reflect.Value, depth int) {
	if s.over() || !v.IsValid() {
		return
	}
	if depth > maxValueDepth {
		s.n = s.limit + 1
		return
	}
	if v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		s.n += v.Len()
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			s.add(v.Elem(), depth+1)
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			s.n += v.Len()
			return
		}
		for i := 0; i < v.Len() && !s.over(); i++ {
			s.n += 2
			s.add(v.Index(i), depth+1)
		}
	case reflect.Map:
		if m, ok := v.Interface().(map[string]any); ok {
			for k, e := range m {
				if s.over() {
					return
				}
				s.n += 4 + len(k)
				s.add(reflect.ValueOf(e), depth+1)
			}
			return
		}
		it := v.MapRange()
		for it.Next() && !s.over() {
			s.n += 4
			s.add(it.Key(), depth+1)
			s.add(it.Value(), depth+1)
		}
	default:
		s.n += 8
	}
}

// limitedWriter appends to a buffer while the assignment's output budget lasts and the
// environment's deadline has not passed.
type limitedWriter struct {
	buf *bytes.Buffer
	b   *budget
}

// Write implements io.Writer.
func (w *limitedWriter) Write(p []byte) (int, error) {
	if err := w.b.alive(); err != nil {
		return 0, err
	}
	if len(p) > w.b.output {
		return 0, outputBytesError(w.b.limits)
	}
	w.b.output -= len(p)
	return w.buf.Write(p)
}

// WriteString implements io.StringWriter: Write without copying s into a byte slice.
func (w *limitedWriter) WriteString(s string) (int, error) {
	if err := w.b.alive(); err != nil {
		return 0, err
	}
	if len(s) > w.b.output {
		return 0, outputBytesError(w.b.limits)
	}
	w.b.output -= len(s)
	return w.buf.WriteString(s)
}
