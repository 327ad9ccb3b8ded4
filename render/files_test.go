package render_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/render"
)

func TestFiles(t *testing.T) {
	f := render.NewFiles([]byte("rec"), []byte(""), []byte("cfg"), false)
	require.Equal(t, 3, f.Len())
	require.Equal(t, map[string][]byte{render.ReconcilerFile: []byte("rec"), render.NamespaceFile: {}, render.ConfigFileYAML: []byte("cfg")}, f.Map())
	require.NotNil(t, f.File(render.NamespaceFile), "an empty file exists")
	require.Nil(t, f.File(render.ConfigFileSh))
	var names []string
	require.NoError(t, f.Each(func(name string, _ []byte) error { names = append(names, name); return nil }))
	require.Equal(t, []string{render.NamespaceFile, render.ConfigFileYAML, render.ReconcilerFile}, names)
	rec := f.File(render.ReconcilerFile)
	_ = append(rec, 'x')
	require.Equal(t, "", string(f.File(render.NamespaceFile)), "appending to a file leaves the next alone")

	sh := render.NewFiles([]byte("rec"), []byte("ns"), nil, true)
	require.Equal(t, 2, sh.Len())
	require.Nil(t, sh.File(render.ConfigFileSh), "an empty platform config is left out")
	require.Equal(t, "ns", string(sh.File(render.NamespaceFile)))
	require.Equal(t, 0, render.Files{}.Len())
	require.Nil(t, render.Files{}.File(render.ReconcilerFile))
	require.Empty(t, render.Files{}.Map())
}
