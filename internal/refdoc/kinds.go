package refdoc

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// kindDoc is the reference of one kind.
type kindDoc struct {
	name       string
	apiVersion string
	doc        string
	body       string // spec, or data for ConfigMap
	fields     []*field
	example    []byte
}

// Reference is what Generate found: the markdown, and what lacks documentation.
type Reference struct {
	Markdown []byte
	Problems []string
	// Examples holds each kind's example document, by kind.
	Examples map[string][]byte
}

// Generate reads the Go sources of package scheduling in dir and writes the reference.
func Generate(dir string) (*Reference, error) {
	src, err := readSource(dir)
	if err != nil {
		return nil, err
	}
	common := src.fieldsOf("metadata", "metadata", map[string]bool{})
	ref := &Reference{Examples: map[string][]byte{}}
	ref.Problems = problems(common, "every object")
	var kinds []*kindDoc
	for _, name := range src.kinds {
		k, err := src.kind(name)
		if err != nil {
			return nil, err
		}
		ref.Problems = append(ref.Problems, problems(k.fields, name)...)
		if k.doc == "" {
			ref.Problems = append(ref.Problems, "type "+name+": no doc comment")
		}
		ref.Examples[name] = k.example
		kinds = append(kinds, k)
	}
	sort.Strings(ref.Problems)
	ref.Markdown = markdown(src, common, kinds)
	return ref, nil
}

// kind documents one kind: its type's doc, its body's fields and a composed example.
func (s *source) kind(name string) (*kindDoc, error) {
	k := &kindDoc{name: name, apiVersion: s.apiVersion, body: "spec"}
	t := s.types[name]
	if t == nil {
		return nil, fmt.Errorf("refdoc: kind %s has no type %s", name, name)
	}
	k.doc = paragraph(t.doc)
	if spec, ok := s.specs[name]; ok {
		k.fields = s.fieldsOf(spec, "spec", map[string]bool{})
	} else {
		// A kind without a spec type is the Kubernetes ConfigMap: apiVersion v1, its data.
		k.apiVersion, k.body = "v1", "data"
		k.fields = s.dataField(name)
	}
	meta, err := s.metadataExample(name)
	if err != nil {
		return nil, err
	}
	body, err := exampleOf(k.fields)
	if err != nil {
		return nil, err
	}
	if k.body == "data" && len(body.Content) == 2 {
		body = body.Content[1]
	}
	k.example, err = document(k.apiVersion, name, meta, k.body, body)
	return k, err
}

// dataField documents the Data field of a ConfigMap-like kind as the body "data".
func (s *source) dataField(kind string) []*field {
	for _, f := range s.structOf(kind).Fields.List {
		if fieldName(f) == "Data" {
			fd := &field{path: "data", goName: kind + ".Data", required: false, def: "{}", doc: paragraph(docOf(f)), example: tagOf(f).Get("example")}
			s.describeType(fd, f.Type, map[string]bool{})
			return []*field{fd}
		}
	}
	return nil
}

// metadataExample is the example tag of the kind type's embedded Object.
func (s *source) metadataExample(kind string) (*yaml.Node, error) {
	for _, f := range s.structOf(kind).Fields.List {
		if len(f.Names) == 0 && identName(f.Type) == "Object" {
			if ex := tagOf(f).Get("example"); ex != "" {
				return parseExample(ex, kind+".Object")
			}
		}
	}
	return nil, fmt.Errorf("refdoc: %s.Object has no example tag (example:\"{name: …}\")", kind)
}

// firstSentence is the first sentence of a doc comment.
func firstSentence(doc string) string {
	if i := strings.Index(doc, ". "); i >= 0 {
		return doc[:i+1]
	}
	return doc
}
