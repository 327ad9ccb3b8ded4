package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// compareYAML checks the output of a manifest rendered with the real values against its output
// with placeholders: the same YAML documents and nodes — kinds, styles, explicit tags, anchors,
// aliases, numbers of keys and items — where every scalar is the same or is the placeholder
// scalar with each placeholder replaced by its value. shell is set for an output that is not
// YAML (a platform-config.sh): no checked value may be placed in it. It returns nil when every
// value is placed as one scalar.
func compareYAML(real, placed []byte, p *placement, shell bool) *misplaced {
	if bytes.Equal(real, placed) {
		return nil
	}
	candidates := p.in(string(placed))
	if shell {
		return blame(candidates, p, "the file is not YAML (platform-config.sh): only values of letters, digits and . _ / : @ + = ~ - are written into it")
	}
	want, err := yamlDocuments(placed)
	if err != nil {
		return blame(candidates, p, "the template's output is not YAML, so only values of letters, digits and . _ / : @ + = ~ - are written into it")
	}
	got, err := yamlDocuments(real)
	if err != nil {
		return blame(candidates, p, fmt.Sprintf("it makes the output invalid YAML (%s)", strings.TrimPrefix(err.Error(), "yaml: ")))
	}
	if len(got) != len(want) {
		return blame(candidates, p, fmt.Sprintf("it makes %d YAML documents where the template has %d", len(got), len(want)))
	}
	for i := range want {
		if m := compareNodes(got[i], want[i], p); m != nil {
			return m
		}
	}
	return nil
}

// yamlDocuments parses every document of a YAML stream.
func yamlDocuments(text []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, &n)
	}
}

// compareNodes compares a node of the real output with the same node of the placeholder output.
func compareNodes(got, want *yaml.Node, p *placement) *misplaced {
	culprits := func() []checkedValue { return p.in(nodeText(want)) }
	switch {
	case got.Kind != want.Kind:
		return blame(culprits(), p, fmt.Sprintf("it makes %s where the template has %s", nodeKind(got), nodeKind(want)))
	case got.Anchor != want.Anchor:
		return blame(culprits(), p, fmt.Sprintf("it adds the anchor &%s", got.Anchor))
	case got.Kind == yaml.AliasNode && got.Value != want.Value:
		return blame(culprits(), p, fmt.Sprintf("it makes the alias *%s", got.Value))
	case explicitTag(got) != explicitTag(want):
		return blame(culprits(), p, fmt.Sprintf("it adds the tag %s", got.Tag))
	case got.Kind != yaml.ScalarNode && got.Tag != want.Tag:
		return blame(culprits(), p, fmt.Sprintf("it makes %s where the template has %s", got.Tag, want.Tag))
	case len(got.Content) != len(want.Content):
		return blame(culprits(), p, fmt.Sprintf("it makes %s where the template has %s", sizeOfNode(got), sizeOfNode(want)))
	case got.Kind == yaml.ScalarNode:
		return compareScalars(got, want, p)
	}
	for i := range want.Content {
		if m := compareNodes(got.Content[i], want.Content[i], p); m != nil {
			return m
		}
	}
	return nil
}

// compareScalars checks that a scalar reads back as the template's text with the values in it
// (quoted or not: a template function such as toYaml may quote a value the placeholder needed
// no quotes for).
func compareScalars(got, want *yaml.Node, p *placement) *misplaced {
	if got.Value == want.Value {
		return nil
	}
	values := p.in(want.Value)
	expected := p.restore.Replace(want.Value)
	switch {
	case len(values) == 0:
		return blame(p.in(nodeText(want)), p, fmt.Sprintf("the template changes it before writing it, so where it goes cannot be checked (the scalar reads %q)", got.Value))
	case got.Value == expected || sameBlock(got, expected):
		return nil
	case hasEscapes([]byte(got.Value)):
		return blame(values, p, "a template function changes it: functions see the { and } of workload values escaped, so that they never run as templates, and cannot write them back")
	}
	return blame(values, p, fmt.Sprintf("the scalar reads back as %q instead of %q (quote it differently in the template, or change the value)", got.Value, expected))
}

// sameBlock tells whether a block scalar differs from expected only by the line breaks its
// chomping keeps at the end (an empty value leaves an empty block, without a line).
func sameBlock(got *yaml.Node, expected string) bool {
	return got.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 && strings.TrimRight(got.Value, "\n") == strings.TrimRight(expected, "\n")
}

// blame names the first of the values found, or the first checked value.
func blame(found []checkedValue, p *placement, reason string) *misplaced {
	if len(found) == 0 {
		found = p.values
	}
	return &misplaced{value: found[0], reason: reason}
}

// nodeText is every scalar, key and alias of a node, for finding the placeholders below it.
func nodeText(n *yaml.Node) string {
	var b strings.Builder
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		b.WriteString(n.Value)
		b.WriteByte('\n')
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func explicitTag(n *yaml.Node) string {
	if n.Style&yaml.TaggedStyle != 0 {
		return n.Tag
	}
	return ""
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.DocumentNode:
		return "a document"
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	}
	return "a scalar"
}

func sizeOfNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return fmt.Sprintf("a mapping of %d keys", len(n.Content)/2)
	case yaml.SequenceNode:
		return fmt.Sprintf("a list of %d items", len(n.Content))
	}
	return fmt.Sprintf("%s of %d nodes", nodeKind(n), len(n.Content))
}
