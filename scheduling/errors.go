package scheduling

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a position in a source file: the file's path as the user knows it and a 1-based line.
type Pos struct {
	File string
	Line int
}

// String formats the position as file:line (file alone when the line is unknown).
func (p Pos) String() string {
	if p.Line <= 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Error is a problem with the control plane, located at a file and line and naming the object.
type Error struct {
	Pos    Pos
	Object string // e.g. `ClusterType "large"`; empty when the object is unknown
	Msg    string
}

// Error formats the problem as `file:line: Object: message`.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Pos.String())
	b.WriteString(": ")
	if e.Object != "" {
		b.WriteString(e.Object)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is a list of problems, reported all at once.
type Errors []*Error

// Add appends a problem.
func (es *Errors) Add(pos Pos, object, format string, args ...any) {
	*es = append(*es, &Error{Pos: pos, Object: object, Msg: fmt.Sprintf(format, args...)})
}

// Sorted returns the problems ordered by file, line and message, without duplicates.
func (es Errors) Sorted() Errors {
	out := append(Errors(nil), es...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Pos.File != b.Pos.File {
			return a.Pos.File < b.Pos.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		return a.Error() < b.Error()
	})
	dedup := out[:0]
	for i, e := range out {
		if i > 0 && e.Error() == out[i-1].Error() {
			continue
		}
		dedup = append(dedup, e)
	}
	return dedup
}

// Error joins the problems one per line, so Errors can travel as an error.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// ObjectRef names an object as `Kind "name"` for messages.
func ObjectRef(kind, name string) string {
	if name == "" {
		return kind
	}
	return fmt.Sprintf("%s %q", kind, name)
}
