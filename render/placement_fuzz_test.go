package render_test

import (
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/kalypso-gitops/kalypso/render"
)

// safeValue is a value that can change nothing: the output it renders into is the structure
// every other value must keep.
const safeValue = "safeValue1"

// FuzzWorkloadValues checks the rule for values from workload repositories in every position
// a template may put them: a value either renders as the reference renders it (text/template
// substitution) into exactly one scalar that reads back as the template's text with the value
// in it, the YAML otherwise the same as with a harmless value — or the assignment is refused.
// Never new structure, never a template action run.
func FuzzWorkloadValues(f *testing.F) {
	for _, s := range []string{
		"./prometheus", "./p\"\n  prune: true\n---\nkind: ClusterRoleBinding", ">=2.3.0 <3.0.0", "{{ .ConfigData }}",
		"a: b", "x #y", "&a *a", "\u2028", "...", "- x", "!!binary eA==", "{a: b}", "x\n  y: z", "'q'", `a\"b`,
		"A", "@", ":", "a:", "%YAML", "x\r", "x\t#y", "\ufeffx", "{{", "}}",
	} {
		f.Add(s)
	}
	type position struct {
		manifest string
		safe     []*yaml.Node // the output with safeValue
	}
	var ps []position
	for _, where := range slices.Sorted(maps.Keys(positions)) {
		snap := placementEnv(f, positions[where], safeValue)
		res := render.Environment(snap)
		ps = append(ps, position{manifest: positions[where], safe: documents(f, string(res.Outputs.Map()["c/app-checked"].File(render.ReconcilerFile)))})
	}
	f.Fuzz(func(t *testing.T, value string) {
		if len(value) > 512 || strings.ContainsRune(value, '\x00') {
			return
		}
		for _, p := range ps {
			snap := placementEnv(t, p.manifest, safeValue)
			snap.Targets[0].Manifests["value"] = value
			res := render.Environment(snap)
			files, ok := res.Outputs.Map()["c/app-checked"]
			if !ok {
				continue // refused
			}
			got := string(files.File(render.ReconcilerFile))
			want := referenceOutput(t, p.manifest, snap.Targets[0].Manifests)
			if got != want {
				t.Fatalf("value %q renders as %q, the reference as %q", value, got, want)
			}
			sameStructure(t, value, documents(t, got), p.safe)
		}
	})
}

// sameStructure fails unless got has the structure of safe, and every scalar of got is the
// scalar of safe with safeValue replaced by value.
func sameStructure(t *testing.T, value string, got, safe []*yaml.Node) {
	t.Helper()
	if len(got) != len(safe) {
		t.Fatalf("value %q makes %d documents instead of %d", value, len(got), len(safe))
	}
	var walk func(g, s *yaml.Node)
	walk = func(g, s *yaml.Node) {
		switch {
		case g.Kind != s.Kind || len(g.Content) != len(s.Content) || g.Anchor != s.Anchor || g.Style&yaml.TaggedStyle != 0:
			t.Fatalf("value %q changes the structure: %v where the template has %v", value, g, s)
		case g.Kind == yaml.ScalarNode && g.Value != strings.ReplaceAll(s.Value, safeValue, value) &&
			(g.Style&yaml.LiteralStyle == 0 || strings.TrimRight(g.Value, "\n") != strings.TrimRight(strings.ReplaceAll(s.Value, safeValue, value), "\n")):
			t.Fatalf("value %q: the scalar reads %q, not %q", value, g.Value, strings.ReplaceAll(s.Value, safeValue, value))
		}
		for i := range s.Content {
			walk(g.Content[i], s.Content[i])
		}
	}
	for i := range safe {
		walk(got[i], safe[i])
	}
}

func documents(t testing.TB, text string) []*yaml.Node {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(text))
	var out []*yaml.Node
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("output is not YAML: %v\n%s", err, text)
			}
			return out
		}
		out = append(out, &n)
	}
}
