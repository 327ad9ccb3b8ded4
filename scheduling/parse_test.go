package scheduling

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// brokenDocuments is a file of n documents, every other one with a syntax error.
func brokenDocuments(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: c%d\n", i)
		if i%2 == 0 {
			b.WriteString("spec: {reconciler: [unclosed\n")
		} else {
			b.WriteString("spec: {reconciler: r, namespaceService: n, configType: c}\n")
		}
	}
	return b.String()
}

// A file is split once into its documents: the chunks cover it exactly, in order, each
// starting at a document marker, with the line it starts on.
func TestSplitDocumentsCoversTheFileOnce(t *testing.T) {
	data := "a: 1\n---\nb: 2\r\n--- # comment\r\nc: 3\r---\n----\nd: |\n  ---\n---"
	chunks := splitDocuments([]byte(data))
	var joined strings.Builder
	var lines []int
	for _, c := range chunks {
		joined.Write(c.text)
		lines = append(lines, c.line)
	}
	require.Equal(t, data, joined.String())
	require.Equal(t, []int{1, 2, 4, 6, 10}, lines, "`----` and an indented `---` start no document; a lone \\r ends a line")
}

// A syntax error blanks only its own document, reported at the line of the file where it is;
// the documents after it are read.
func TestBrokenDocumentsAreReportedOnceEach(t *testing.T) {
	objs, errs := parse(t, brokenDocuments(6))
	require.Len(t, objs.clusterTypes, 3)
	require.Len(t, objs.broken, 3)
	require.Len(t, errs, 3)
	for i, e := range errs { // document 2i takes lines 12i+1 to 12i+6
		require.Equal(t, "f.yaml", e.Pos.File)
		require.True(t, e.Pos.Line > 12*i && e.Pos.Line <= 12*i+6, "%v", e)
		require.Equal(t, fmt.Sprintf(`ClusterType "c%d"`, 2*i), e.Object)
	}
	require.Equal(t, 8, objs.clusterTypes[0].Pos.Line, "lines of later documents are lines of the file")
	require.Equal(t, 12, objs.clusterTypes[0].At("spec").Line)
}

// Aliases cannot make decoding a small document expensive: expanding beyond a multiple of its
// size is an error, and the object is not used.
func TestAliasExpansionIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata: {name: w}\nspec:\n  configSchemas: &s [")
	b.WriteString(strings.TrimSuffix(strings.Repeat(`"x", `, 1000), ", "))
	b.WriteString("]\n  deploymentTargets: [")
	b.WriteString(strings.TrimSuffix(strings.Repeat("{name: t, environment: dev, manifests: {}, configSchemas: *s}, ", 200), ", "))
	b.WriteString("]\n")
	objs, errs := parse(t, b.String())
	require.Empty(t, objs.workloads)
	require.Contains(t, errs.Error(), "aliases expand this document to more than")
}

// Problems are capped per file: the first ones are kept in order, the rest counted in one.
func TestErrorsAreCappedPerFile(t *testing.T) {
	var errs Errors
	for i := 1; i <= 30; i++ {
		errs.Add(Pos{File: "a.yaml", Line: i}, "", "problem %d", i)
	}
	errs.Add(Pos{File: "b.yaml", Line: 1}, "", "other")
	capped := errs.CapPerFile(20)
	require.Len(t, capped, 22)
	require.Equal(t, "a.yaml:20: problem 20", capped[19].Error())
	require.Equal(t, "a.yaml:21: and 10 more errors in this file (at most 20 are reported per file)", capped[20].Error())
	require.Equal(t, "b.yaml:1: other", capped[21].Error())
}

// Load caps the problems of a file of many broken documents.
func TestLoadCapsErrorsOfAFile(t *testing.T) {
	in := tenancyInputs(nil, nil)
	in.Env.FS.(fstest.MapFS)["bomb.yaml"] = &fstest.MapFile{Data: []byte(brokenDocuments(200))}
	snap := Load(in)
	var inBomb []string
	for _, e := range snap.Errors {
		if e.Pos.File == "dev:bomb.yaml" {
			inBomb = append(inBomb, e.Msg)
		}
	}
	require.Len(t, inBomb, MaxErrorsPerFile+1)
	require.Equal(t, "and 80 more errors in this file (at most 20 are reported per file)", inBomb[MaxErrorsPerFile])
	require.True(t, snap.Incomplete)
}

// BenchmarkParseBrokenDocuments parses files of broken documents of growing size: the time
// per byte stays the same (linear), where re-parsing the file for every broken document was
// quadratic (12 KB took 1.7 s, 48 KB 33 s).
func BenchmarkParseBrokenDocuments(b *testing.B) {
	for _, n := range []int{100, 400, 1600, 6400} {
		data := []byte(brokenDocuments(n))
		b.Run(fmt.Sprintf("%dKB", len(data)>>10), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var objs objects
				var errs Errors
				parseFile("f.yaml", data, &objs, &errs)
			}
		})
	}
}
