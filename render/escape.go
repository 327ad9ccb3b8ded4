package render

import (
	"bytes"
	"strings"
)

// Values that come from workload repositories (deployment target and workload names, labels,
// manifests) are data, never code: before a template sees them, every `{` and `}` in them is
// replaced by a private-use escape, so that no rendering pass can find a `{{` made of their
// bytes, alone or next to other text. The private-use characters the escapes are made of are
// escaped too, so that no value can forge a placeholder. RestoreLiterals turns every escape
// back into the original text once, after the last pass.
const (
	escapeMark  = "\uE002"              // starts a two-character escape
	escOpen     = escapeMark + "\uE003" // `{`
	escClose    = escapeMark + "\uE004" // `}`
	escPrivate0 = escapeMark + "\uE005" // U+E000
	escPrivate1 = escapeMark + "\uE006" // U+E001
	escPrivate2 = escapeMark + "\uE007" // U+E002
)

var (
	workloadEscaper = strings.NewReplacer("{", escOpen, "}", escClose,
		"\uE000", escPrivate0, "\uE001", escPrivate1, "\uE002", escPrivate2)
	literalEscaper = strings.NewReplacer("{{", literalOpen, "}}", literalClose,
		"\uE000", escPrivate0, "\uE001", escPrivate1, "\uE002", escPrivate2)
	restorer = strings.NewReplacer(literalOpen, "{{", literalClose, "}}", escOpen, "{", escClose, "}",
		escPrivate0, "\uE000", escPrivate1, "\uE001", escPrivate2, "\uE002")
)

// needsEscape reports whether s has a brace or a character of the private-use block the
// escapes use (UTF-8 lead byte 0xEE).
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '{' || c == '}' || c == 0xEE {
			return true
		}
	}
	return false
}

// untrusted returns a workload value as templates must see it.
func untrusted(s string) string {
	if !needsEscape(s) {
		return s
	}
	return workloadEscaper.Replace(s)
}

// untrustedMap returns a map of workload keys and values as templates must see it; the map
// itself when nothing needs escaping.
func untrustedMap(m map[string]string) map[string]string {
	clean := true
	for k, v := range m {
		if needsEscape(k) || needsEscape(v) {
			clean = false
			break
		}
	}
	if clean {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[untrusted(k)] = untrusted(v)
	}
	return out
}

// hasEscapes reports whether rendered text holds placeholders or escapes to restore.
func hasEscapes(out []byte) bool {
	for i := bytes.IndexByte(out, 0xEE); i >= 0 && i+2 < len(out); {
		if out[i+1] == 0x80 && out[i+2] >= 0x80 && out[i+2] <= 0x82 {
			return true
		}
		j := bytes.IndexByte(out[i+1:], 0xEE)
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}
