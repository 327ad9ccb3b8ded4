package scheduling

import (
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

func parse(t *testing.T, doc string) (*objects, Errors) {
	t.Helper()
	var objs objects
	var errs Errors
	parseFile("f.yaml", []byte(doc), &objs, &errs)
	return &objs, errs.Sorted()
}

func TestStrictDecoding(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"wrong type for a string", "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: a\nspec:\n  reconciler: 5\n  namespaceService: x\n  configType: y\n",
			`f.yaml:6: ClusterType "a": spec.reconciler: expected a string, got int "5" (quote it to make it a string)`},
		{"list instead of mapping", "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: a\n  labels: [x]\nspec:\n  reconciler: r\n  namespaceService: x\n  configType: y\n",
			`f.yaml:5: ClusterType "a": metadata.labels: expected a mapping, got a list`},
		{"unquoted label value", "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: a\n  labels:\n    edge: true\nspec:\n  reconciler: r\n  namespaceService: x\n  configType: y\n",
			`f.yaml:6: ClusterType "a": metadata.labels.edge: expected a string, got bool "true" (quote it to make it a string)`},
		{"enum", "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Template\nmetadata:\n  name: a\nspec:\n  type: reconcilers\n  manifests: []\n",
			`f.yaml:6: Template "a": spec.type: "reconcilers" is not one of reconciler, namespace, config`},
		{"missing name", "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: GitOpsRepo\nmetadata:\n  labels: {}\nspec:\n  repo: r\n  branch: b\n  path: .\n",
			`f.yaml:4: GitOpsRepo: metadata: missing required field "name"`},
		{"duplicate key", "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: GitOpsRepo\nmetadata:\n  name: a\nspec:\n  repo: r\n  repo: s\n  branch: b\n  path: .\n",
			`f.yaml:7: GitOpsRepo "a": spec: field "repo" is defined twice`},
		{"unknown top-level field", "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: GitOpsRepo\nmetadata:\n  name: a\nspecs: {}\n",
			`f.yaml:5: GitOpsRepo "a": unknown field "specs"`},
		{"wrong version", "apiVersion: scheduler.kalypso.io/v1\nkind: ClusterType\nmetadata:\n  name: a\n",
			`f.yaml:1: ClusterType: unsupported apiVersion "scheduler.kalypso.io/v1" (want scheduler.kalypso.io/v1alpha1)`},
		{"unknown kind", "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterTyp\nmetadata:\n  name: a\n",
			`f.yaml:1: unknown kind "ClusterTyp" in scheduler.kalypso.io/v1alpha1`},
		{"invalid label key", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    \"bad key!\": x\ndata: {}\n",
			`f.yaml:6: ConfigMap "c": metadata.labels: invalid label key "bad key!"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, errs := parse(t, tc.doc)
			require.NotEmpty(t, errs)
			require.Contains(t, errs.Error(), tc.want)
			require.True(t, len(objs.broken) > 0 || objs.unreadable, "the object must be recorded as broken")
		})
	}
}

func TestParseIgnoresOtherObjectsAndKeepsGoodDocuments(t *testing.T) {
	doc := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec: {whatever: 1}\n---\n# just a comment\n---\nname: not an object\n---\n" +
		"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: a\nspec:\n  reconciler: [r\n" +
		"---\napiVersion: scheduler.kalypso.io/v1alpha1\nkind: GitOpsRepo\nmetadata:\n  name: g\nspec:\n  repo: r\n  branch: b\n  path: .\n"
	objs, errs := parse(t, doc)
	require.Len(t, errs, 1)
	require.Regexp(t, `^f.yaml:1[5-7]: ClusterType "a": YAML syntax error`, errs[0].Error())
	require.Len(t, objs.gitopsRepos, 1, "the document after the broken one is still read")
	require.Equal(t, 18, objs.gitopsRepos[0].Pos.Line, "lines keep their numbers")
	require.Len(t, objs.broken, 1)
	require.Equal(t, KindClusterType, objs.broken[0].Kind)
	require.Equal(t, "a", objs.broken[0].Name)
	require.True(t, objs.broken[0].Unknown)
	require.False(t, objs.unreadable)
}

func TestSyntaxErrorWithoutKindMakesSnapshotIncomplete(t *testing.T) {
	objs, errs := parse(t, "a: [b\n")
	require.Len(t, errs, 1)
	require.True(t, objs.unreadable)
}

func TestSubPathAndRepoSlug(t *testing.T) {
	for in, want := range map[string]string{".": "", "./workloads": "workloads", "workload/": "workload", "a/../b": "b", "/x/y": "x/y"} {
		got, err := SubPath(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"..", "../x", "a/../../x"} {
		_, err := SubPath(bad)
		require.Error(t, err, bad)
	}
	owner, name, err := RepoSlug("https://github.example.com/org/repo.git")
	require.NoError(t, err)
	require.Equal(t, "org/repo", owner+"/"+name)
	for _, bad := range []string{"repo", "https://github.com/org", "https://github.com/../x"} {
		_, _, err := RepoSlug(bad)
		require.Error(t, err, bad)
	}
}

func TestSourceIgnoreAndNonYAMLFiles(t *testing.T) {
	ct := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: %s\nspec:\n  reconciler: r\n  namespaceService: n\n  configType: c\n"
	fsys := fstest.MapFS{
		".sourceignore":       {Data: []byte("# comment\nignored/\n*.skip.yaml\n")},
		"a.yaml":              {Data: []byte(sprintf(ct, "a"))},
		"b.yml":               {Data: []byte(sprintf(ct, "b"))},
		"c.json":              {Data: []byte("{}")},
		"ignored/x.yaml":      {Data: []byte(sprintf(ct, "x"))},
		"deep/d.skip.yaml":    {Data: []byte(sprintf(ct, "d"))},
		"deep/er/e.yaml":      {Data: []byte(sprintf(ct, "e"))},
		".git/config.yaml":    {Data: []byte(sprintf(ct, "g"))},
		"README.md":           {Data: []byte("# hi")},
		"workflows/wf.yaml":   {Data: []byte("on: push\njobs: {}\n")},
		"kustomization.yaml":  {Data: []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")},
		"empty.yaml":          {Data: []byte("")},
		"only-comments.yaml":  {Data: []byte("# nothing\n")},
		"multi/two-docs.yaml": {Data: []byte(sprintf(ct, "m1") + "---\n" + sprintf(ct, "m2"))},
	}
	var objs objects
	var errs Errors
	l := newLoader(Policy{}, &errs)
	defer l.stop()
	require.True(t, l.source(Source{FS: fsys, Prefix: "env:"}, "", &objs))
	require.Empty(t, errs)
	var names []string
	for _, c := range objs.clusterTypes {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"a", "b", "e", "m1", "m2"}, names)
	require.Equal(t, "env:multi/two-docs.yaml", objs.clusterTypes[4].Pos.File)
	require.Equal(t, 10, objs.clusterTypes[4].Pos.Line)
}

// TestFieldsOfEveryKindAreKnownAhead checks that the fields of every spec type, and of the
// struct types they reach, are looked up in the table made when the package starts, and that
// the table says what looking at the type says.
func TestFieldsOfEveryKindAreKnownAhead(t *testing.T) {
	for kind, spec := range specTypes {
		typ := reflect.TypeOf(spec()).Elem()
		require.Contains(t, knownFields, typ, kind)
		require.Equal(t, fieldsOf(typ), structFields(typ), kind)
	}
	require.Contains(t, knownFields, reflect.TypeOf(TargetSpec{}), "a type reached through a slice of a spec")
}
