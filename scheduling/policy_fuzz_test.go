package scheduling

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzWorkloadValues checks that every value accepted from a workload repository keeps the
// structure of the YAML it is written into, plain or double-quoted, and carries no template.
func FuzzWorkloadValues(f *testing.F) {
	for _, s := range [][2]string{
		{"path", "./prometheus"}, {"path", "./p\"\n  prune: true\n---\nkind: ClusterRoleBinding"},
		{"repo", "https://github.com/org/app"}, {"repo", "https://github.com/org/app#x"},
		{"branch", "release/1.2"}, {"branch", "a..b"}, {"path", "{{ .ConfigData }}"},
		{"extra", "a: b"}, {"extra", "x #y"}, {"extra", "&a *a"}, {"extra", "\u2028"}, {"path", "./"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		if manifestValue(key, value, Policy{}) != nil {
			return
		}
		if strings.Contains(value, "{{") || strings.Contains(value, "}}") {
			t.Fatalf("accepted a template: %q", value)
		}
		for _, doc := range []string{"v: " + value + "\nnext: 1\n", "v: \"" + value + "\"\nnext: 1\n"} {
			docs, err := decodeAll(doc)
			if err != nil {
				t.Fatalf("accepted %q, which breaks YAML %q: %v", value, doc, err)
			}
			if len(docs) != 1 || len(docs[0]) != 2 {
				t.Fatalf("accepted %q, which changes the structure of %q: %v", value, doc, docs)
			}
		}
		docs, _ := decodeAll("v: \"" + value + "\"\n")
		if docs[0]["v"] != value {
			t.Fatalf("accepted %q, which reads back as %q when quoted", value, docs[0]["v"])
		}
	})
}

func decodeAll(doc string) ([]map[string]any, error) {
	dec := yaml.NewDecoder(bytes.NewReader([]byte(doc)))
	var out []map[string]any
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
}
