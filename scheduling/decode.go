package scheduling

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// fieldDecoder decodes a YAML node into a Go value strictly: unknown fields, wrong types and
// missing required fields are errors at the line where they are written.
type fieldDecoder struct {
	pos   Pos // file and document line
	ref   string
	errs  *Errors
	lines map[string]int
	ok    bool
	// visits counts the nodes decoded, aliases followed included; past maxVisits (0: no
	// limit) decoding stops, so that aliases cannot make decoding a small document expensive.
	visits, maxVisits int
}

func newFieldDecoder(pos Pos, ref string, errs *Errors) *fieldDecoder {
	return &fieldDecoder{pos: pos, ref: ref, errs: errs, lines: map[string]int{}, ok: true}
}

// aliasExpansion bounds how many nodes decoding a document may visit, per node it has:
// aliases may repeat parts of a document, not multiply it.
const aliasExpansion = 10

// countNodes returns the number of nodes of a document (aliases counted once, not followed).
func countNodes(n *yaml.Node) int {
	total := 1
	for _, c := range n.Content {
		total += countNodes(c)
	}
	return total
}

// visit counts one decoded node; false once the document has expanded beyond its bound.
func (d *fieldDecoder) visit(n *yaml.Node) bool {
	d.visits++
	if d.maxVisits == 0 || d.visits <= d.maxVisits {
		return true
	}
	if d.visits == d.maxVisits+1 {
		d.fail(n.Line, "aliases expand this document to more than %d nodes (%d times its size); write the values out", d.maxVisits, aliasExpansion)
	}
	return false
}

func (d *fieldDecoder) fail(line int, format string, args ...any) {
	d.ok = false
	d.errs.Add(Pos{File: d.pos.File, Line: line}, d.ref, format, args...)
}

var textType = reflect.TypeOf(Text{})

// decode fills v from n; path names the field for messages ("spec.reconciler").
func (d *fieldDecoder) decode(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if !d.visit(n) || isNull(n) {
		return
	}
	switch {
	case v.Type() == textType:
		if s, ok := d.scalarString(n, path); ok {
			v.Set(reflect.ValueOf(Text{Value: s, Line: contentLine(n)}))
		}
	case v.Type() == quantityType:
		d.decodeQuantity(n, v, path)
	case v.Kind() == reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		d.decode(n, elem.Elem(), path)
		v.Set(elem)
	case v.Kind() == reflect.Struct:
		d.decodeStruct(n, v, path)
	case v.Kind() == reflect.Map:
		d.decodeStringMap(n, v, path)
	case v.Kind() == reflect.Slice:
		d.decodeSlice(n, v, path)
	case v.Kind() == reflect.String:
		if s, ok := d.scalarString(n, path); ok {
			v.SetString(s)
		}
	case v.Kind() == reflect.Int:
		d.decodeInt(n, v, path)
	case v.Kind() == reflect.Bool:
		d.decodeBool(n, v, path)
	default:
		panic(fmt.Sprintf("scheduling: no strict decoding for %s", v.Type()))
	}
}

// contentLine is the line where a scalar's text starts: the line after `|` or `>` for blocks.
func contentLine(n *yaml.Node) int {
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return n.Line + 1
	}
	return n.Line
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%s %q", strings.TrimPrefix(n.Tag, "!!"), n.Value)
	}
	return "an unexpected node"
}

func (d *fieldDecoder) scalarString(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.fail(n.Line, "%s: expected a string, got %s", path, describe(n))
		return "", false
	}
	if n.Tag != "!!str" {
		d.fail(n.Line, "%s: expected a string, got %s (quote it to make it a string)", path, describe(n))
		return "", false
	}
	return n.Value, true
}

func (d *fieldDecoder) decodeInt(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		d.fail(n.Line, "%s: expected an integer, got %s", path, describe(n))
		return
	}
	i, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil {
		d.fail(n.Line, "%s: %v", path, err)
		return
	}
	v.SetInt(i)
}

// decodeQuantity accepts an integer or a string such as "10%".
func (d *fieldDecoder) decodeQuantity(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!str") {
		d.fail(n.Line, "%s: expected a number or a percentage such as \"10%%\", got %s", path, describe(n))
		return
	}
	v.SetString(n.Value)
}

func (d *fieldDecoder) decodeBool(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		d.fail(n.Line, "%s: expected true or false, got %s", path, describe(n))
		return
	}
	v.SetBool(n.Value == "true" || n.Value == "True" || n.Value == "TRUE")
}

func (d *fieldDecoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.fail(n.Line, "%s: expected a list, got %s", path, describe(n))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.decode(item, out.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(out)
}

func (d *fieldDecoder) decodeStringMap(n *yaml.Node, v reflect.Value, path string) {
	if v.Type().Key().Kind() != reflect.String || v.Type().Elem().Kind() != reflect.String {
		panic(fmt.Sprintf("scheduling: no strict decoding for %s", v.Type()))
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, "%s: expected a mapping, got %s", path, describe(n))
		return
	}
	out := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key, ok := d.scalarString(k, path+" key")
		if !ok {
			continue
		}
		if seen[key] {
			d.fail(k.Line, "%s: key %q is defined twice", path, key)
			continue
		}
		seen[key] = true
		d.lines[path+"."+key] = k.Line
		for val.Kind == yaml.AliasNode {
			val = val.Alias
		}
		if !d.visit(val) {
			return
		}
		s := ""
		if !isNull(val) {
			if s, ok = d.scalarString(val, path+"."+key); !ok {
				continue
			}
		}
		out.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), reflect.ValueOf(s).Convert(v.Type().Elem()))
	}
	v.Set(out)
}

// structField is a decodable field of a struct, found through its yaml tag.
type structField struct {
	index    []int
	required bool
	enum     []string
}

// knownFields holds the fields of every struct type a Kalypso kind's spec reaches, and of the
// metadata, computed once when the package starts and only read afterwards: every document of
// a kind would otherwise look its fields up again.
var knownFields = func() map[reflect.Type]map[string]structField {
	out := map[reflect.Type]map[string]structField{}
	addFields(out, reflect.TypeOf(metadata{}))
	for _, spec := range specTypes {
		addFields(out, reflect.TypeOf(spec()))
	}
	return out
}()

// addFields adds the fields of the struct types t reaches (through pointers, slices, arrays
// and maps) to known.
func addFields(known map[reflect.Type]map[string]structField, t reflect.Type) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || known[t] != nil {
		return
	}
	known[t] = fieldsOf(t)
	for i := 0; i < t.NumField(); i++ {
		addFields(known, t.Field(i).Type)
	}
}

// structFields returns the decodable fields of a struct type by their yaml name. The map may
// be shared: callers only read it.
func structFields(t reflect.Type) map[string]structField {
	if f, ok := knownFields[t]; ok {
		return f
	}
	return fieldsOf(t)
}

func fieldsOf(t reflect.Type) map[string]structField {
	fields := map[string]structField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "" || name == "-" {
			continue
		}
		if opts == "inline" {
			for k, sub := range fieldsOf(f.Type) {
				sub.index = append([]int{i}, sub.index...)
				fields[k] = sub
			}
			continue
		}
		var enum []string
		if e := f.Tag.Get("enum"); e != "" {
			enum = strings.Split(e, ",")
		}
		fields[name] = structField{index: []int{i}, required: f.Tag.Get("required") == "true", enum: enum}
	}
	return fields
}

func (d *fieldDecoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, "%s: expected a mapping, got %s", path, describe(n))
		return
	}
	fields := structFields(v.Type())
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := k.Value
		f, known := fields[key]
		switch {
		case !known:
			d.fail(k.Line, "%s: unknown field %q", path, key)
			continue
		case seen[key]:
			d.fail(k.Line, "%s: field %q is defined twice", path, key)
			continue
		}
		seen[key] = !isNull(val)
		sub := joinPath(path, key)
		d.lines[sub] = k.Line
		fv := v.FieldByIndex(f.index)
		d.decode(val, fv, sub)
		if len(f.enum) > 0 && fv.Kind() == reflect.String && seen[key] && !contains(f.enum, fv.String()) {
			d.fail(val.Line, "%s: %q is not one of %s", sub, fv.String(), strings.Join(f.enum, ", "))
		}
	}
	d.checkRequired(n, fields, seen, path)
}

func (d *fieldDecoder) checkRequired(n *yaml.Node, fields map[string]structField, seen map[string]bool, path string) {
	var missing []string
	for name, f := range fields {
		if f.required && !seen[name] {
			missing = append(missing, name)
		}
	}
	sortStrings(missing)
	for _, name := range missing {
		d.fail(n.Line, "%s: missing required field %q", path, name)
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
