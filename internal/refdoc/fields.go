package refdoc

import (
	"go/ast"
	"reflect"
	"strconv"
	"strings"
)

// field is one documented field: a row of a kind's table.
type field struct {
	path     string // YAML path, e.g. spec.promotion.timeout; [] marks a list element
	goName   string // Type.Field, for problems
	typ      string // as the reference shows it
	required bool
	def      string // the default tag
	enum     []string
	doc      string
	example  string // the example tag, a YAML value
	leaf     bool   // a value, not an object or a list of objects
	children []*field
	list     bool // a list of objects
}

// tagOf returns the parsed struct tag of a field.
func tagOf(f *ast.Field) reflect.StructTag {
	if f.Tag == nil {
		return ""
	}
	t, _ := strconv.Unquote(f.Tag.Value)
	return reflect.StructTag(t)
}

// fieldsOf walks a struct type's YAML fields (inline ones flattened), below path.
func (s *source) fieldsOf(typeName, path string, seen map[string]bool) []*field {
	st := s.structOf(typeName)
	if st == nil || seen[typeName] {
		return nil
	}
	seen[typeName] = true
	defer delete(seen, typeName)
	var out []*field
	for _, f := range st.Fields.List {
		tag := tagOf(f)
		name, opts, _ := strings.Cut(tag.Get("yaml"), ",")
		if tag.Get("yaml") == "" || name == "-" {
			continue
		}
		if opts == "inline" {
			out = append(out, s.fieldsOf(identName(f.Type), path, seen)...)
			continue
		}
		fd := &field{path: joinPath(path, name), goName: typeName + "." + fieldName(f), required: tag.Get("required") == "true",
			def: tag.Get("default"), doc: paragraph(docOf(f)), example: tag.Get("example")}
		if e := tag.Get("enum"); e != "" {
			fd.enum = strings.Split(e, ",")
		}
		s.describeType(fd, f.Type, seen)
		out = append(out, fd)
	}
	return out
}

// describeType fills the type, and the children of an object or list of objects.
func (s *source) describeType(fd *field, expr ast.Expr, seen map[string]bool) {
	switch t := expr.(type) {
	case *ast.StarExpr:
		s.describeType(fd, t.X, seen)
	case *ast.ArrayType:
		if name := identName(t.Elt); s.isObject(name) {
			fd.typ, fd.list = "list of objects", true
			fd.children = s.fieldsOf(name, fd.path+"[]", seen)
			return
		}
		fd.typ, fd.leaf = "list of "+s.scalar(t.Elt)+"s", true
	case *ast.MapType:
		fd.typ, fd.leaf = "map of "+s.scalar(t.Value)+"s", true
	default:
		if name := identName(expr); s.isObject(name) {
			fd.typ = "object"
			fd.children = s.fieldsOf(name, fd.path, seen)
			return
		}
		fd.typ, fd.leaf = s.scalar(expr), true
	}
	if len(fd.enum) > 0 {
		fd.typ = "string: `" + strings.Join(fd.enum, "`, `") + "`"
	}
}

// isObject reports whether a named type decodes from a YAML mapping: a struct with YAML fields.
func (s *source) isObject(name string) bool {
	st := s.structOf(name)
	if st == nil {
		return false
	}
	for _, f := range st.Fields.List {
		if tagOf(f).Get("yaml") != "" {
			return true
		}
	}
	return false
}

// scalar names a scalar type: builtins by their YAML name, named types by what they decode
// from (a struct without YAML fields, such as Text, is a string that remembers its line).
func (s *source) scalar(expr ast.Expr) string {
	name := identName(expr)
	switch name {
	case "string":
		return "string"
	case "int", "int64":
		return "integer"
	case "bool":
		return "boolean"
	}
	if t := s.types[name]; t != nil {
		if _, isStruct := t.expr.(*ast.StructType); !isStruct {
			return s.scalar(t.expr)
		}
	}
	return "string"
}

func identName(expr ast.Expr) string {
	switch t := expr.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return identName(t.X)
	}
	return ""
}

func fieldName(f *ast.Field) string {
	if len(f.Names) > 0 {
		return f.Names[0].Name
	}
	return identName(f.Type)
}

func docOf(f *ast.Field) string {
	if f.Doc != nil {
		return f.Doc.Text()
	}
	return f.Comment.Text()
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// problems lists what a field lacks: every field needs a doc comment, every value an example,
// and every optional value a default.
func problems(fields []*field, where string) []string {
	var out []string
	for _, f := range fields {
		at := f.goName + " (" + where + " " + f.path + ")"
		if f.doc == "" {
			out = append(out, at+": no doc comment")
		}
		if f.leaf && f.example == "" {
			out = append(out, at+`: no example tag (example:"…")`)
		}
		if f.leaf && !f.required && f.def == "" {
			out = append(out, at+`: optional, but no default tag (default:"…")`)
		}
		out = append(out, problems(f.children, where)...)
	}
	return out
}
