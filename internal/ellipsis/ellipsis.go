// Package ellipsis shortens text for fields with a length limit (GitHub's 140-character
// status descriptions, button descriptions, page labels).
package ellipsis

import "unicode/utf8"

// Cut returns s when it is at most n bytes long, and otherwise its first n-1 bytes followed by
// "…", backing off to the start of a UTF-8 character rather than cutting one.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n-1, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
