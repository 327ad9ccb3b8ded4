// Package plural writes a count with its noun in the right number: "1 error", "2 errors".
package plural

import "fmt"

// Count returns "1 noun" for one and "N nouns" otherwise, for nouns whose plural adds "s"
// (a compound noun is pluralised on its last word: "cluster type" → "cluster types").
func Count(n int, noun string) string {
	return CountAs(n, noun, noun+"s")
}

// CountAs returns "1 one" for one and "N many" otherwise, for irregular plurals ("policy", "policies").
func CountAs(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
