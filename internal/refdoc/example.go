package refdoc

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// parseExample reads an example tag, a YAML value, into a node in block style.
func parseExample(text, where string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("%s: example %q: %w", where, text, err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: example %q is empty", where, text)
	}
	n := doc.Content[0]
	blockStyle(n)
	return n, nil
}

// blockStyle drops the flow and quoting styles a YAML parse keeps, so that the encoder lays the
// value out in block style and quotes only what needs it.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// exampleOf composes the example of a list of fields: each value's example, each object made
// of its fields' examples (unless it has an example of its own), each list of objects one
// element long.
func exampleOf(fields []*field) (*yaml.Node, error) {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, f := range fields {
		v, err := fieldExample(f)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: lastSegment(f.path)}, v)
	}
	return m, nil
}

func fieldExample(f *field) (*yaml.Node, error) {
	if f.example != "" {
		return parseExample(f.example, f.goName)
	}
	if f.leaf {
		return nil, nil // reported as a problem
	}
	obj, err := exampleOf(f.children)
	if err != nil || !f.list {
		return obj, err
	}
	return &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{obj}}, nil
}

// lastSegment is the YAML key of a path.
func lastSegment(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			return path[i+1:]
		}
	}
	return path
}

// document lays out a whole object: apiVersion, kind, metadata, then its body under key.
func document(apiVersion, kind string, metadata *yaml.Node, key string, body *yaml.Node) ([]byte, error) {
	scalar := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		scalar("apiVersion"), scalar(apiVersion), scalar("kind"), scalar(kind),
		scalar("metadata"), metadata, scalar(key), body,
	}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
