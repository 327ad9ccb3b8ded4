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
	// Also are further problems found with the same thing (an assignment that fails for more
	// than one reason), reported with it.
	Also []*Error
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

// Sorted returns the problems ordered by file, line and message, without duplicates. Each
// problem is formatted once.
func (es Errors) Sorted() Errors {
	type keyed struct {
		e    *Error
		text string
	}
	list := make([]keyed, len(es))
	for i, e := range es {
		list[i] = keyed{e, e.Error()}
	}
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i].e, list[j].e
		if a.Pos.File != b.Pos.File {
			return a.Pos.File < b.Pos.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		return list[i].text < list[j].text
	})
	out := make(Errors, 0, len(list))
	for i, k := range list {
		if i > 0 && k.text == list[i-1].text {
			continue
		}
		out = append(out, k.e)
	}
	return out
}

// MaxErrorsPerFile is how many problems are reported for one file; the others are counted in
// one more problem ("and N more errors in this file"), so that a file of thousands of broken
// documents costs a bounded report.
const MaxErrorsPerFile = 20

// CapPerFile keeps the first max problems of each file, in the order given, and replaces the
// others by one problem, at the first one left out, that counts them.
func (es Errors) CapPerFile(max int) Errors {
	count := map[string]int{}
	summary := map[string]*Error{}
	out := make(Errors, 0, len(es))
	for _, e := range es {
		f := e.Pos.File
		count[f]++
		switch n := count[f]; {
		case n <= max:
			out = append(out, e)
		case n == max+1:
			summary[f] = &Error{Pos: e.Pos}
			out = append(out, summary[f])
		}
	}
	for f, s := range summary {
		s.Msg = fmt.Sprintf("and %d more errors in this file (at most %d are reported per file)", count[f]-max, max)
	}
	return out
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
