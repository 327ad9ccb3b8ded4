package render

import (
	"testing"
	"text/template"

	"github.com/stretchr/testify/require"
)

// TestMutatesFindsEveryCallOfAWritingFunction checks that a call of a function that writes
// into a dict is found wherever a manifest makes it, and that other manifests are not marked.
func TestMutatesFindsEveryCallOfAWritingFunction(t *testing.T) {
	for text, want := range map[string]bool{
		`{{ .ConfigData.a }}{{ toYaml .ConfigData | indent 2 }}`:                                           false,
		`{{ $d := dict "a" 1 }}{{ $d.a }}{{ pick .ConfigData "a" }}`:                                       false,
		`{{ $_ := set .ConfigData "a" 1 }}`:                                                                true,
		`{{ if .ConfigData }}{{ unset .ConfigData "a" }}{{ end }}`:                                         true,
		`{{ if .X }}x{{ else }}{{ merge .ConfigData (dict) }}{{ end }}`:                                    true,
		`{{ range .ConfigData.list }}{{ mergeOverwrite . (dict) }}{{ end }}`:                               true,
		`{{ with .ConfigData }}{{ (mustMerge . (dict)).a }}{{ end }}`:                                      true,
		`{{ define "x" }}{{ mustMergeOverwrite .ConfigData }}{{ end }}{{ "y" }}`:                           true,
		`{{ .ConfigData | toYaml | quote }}{{ template "t" (set (dict) "a" 1) }}{{ define "t" }}{{ end }}`: true,
	} {
		p, err := template.New("m").Funcs(FuncMap()).Parse(text)
		require.NoError(t, err, text)
		require.Equal(t, want, mutates(p), text)
	}
}
