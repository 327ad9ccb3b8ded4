package config

import (
	"fmt"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// keyLines maps each line of a YAML document that holds a scalar value to the dotted path of
// its key (`workers`, `github.app.integrationID`), so that type errors can name the key.
func keyLines(data []byte) map[int]string {
	var doc yaml.Node
	lines := map[int]string{}
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return lines
	}
	walkKeys(doc.Content[0], "", lines)
	return lines
}

func walkKeys(n *yaml.Node, prefix string, lines map[int]string) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		path := prefix + key.Value
		if value.Kind == yaml.MappingNode {
			walkKeys(value, path+".", lines)
			continue
		}
		lines[value.Line] = path
	}
}

var typeRE = regexp.MustCompile("^cannot unmarshal !!(\\w+) `(.*)` into (\\S+)$")

// kinds says in words what each Go type of the settings expects.
var kinds = map[string]string{
	"int": "an integer", "int64": "an integer", "bool": "true or false", "string": "a string",
	"float64": "a number", "config.Duration": "a duration such as 30s or 5m",
}

// typeMessage names the key of a yaml.v3 type error and what it expects.
func typeMessage(path, text string) string {
	m := typeRE.FindStringSubmatch(text)
	if m == nil || kinds[m[3]] == "" {
		return fmt.Sprintf("%s: %s", named(path), text)
	}
	return fmt.Sprintf("%s: %q is not %s", named(path), m[2], kinds[m[3]])
}
