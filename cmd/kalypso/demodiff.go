package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// maxShownLines bounds the changed lines printed per file.
const maxShownLines = 4

// prTree reads the app's branch of an environment on the GitOps repository.
func (w *demoWorld) prTree(env string) map[string]string {
	tree, err := w.sim.Tree(sample.Owner, sample.GitOpsRepo, "kalypso/"+env)
	if err != nil {
		return map[string]string{}
	}
	return tree
}

// showStepChanges prints what a step changed in the pull request of an environment: each file
// added, removed or changed with its changed lines, the files that went back to their merged
// content (changes the pull request no longer carries), and those it carries again.
func (w *demoWorld) showStepChanges(env string, before, after map[string]string) {
	merged, _ := w.sim.Tree(sample.Owner, sample.GitOpsRepo, env)
	var lines, reverted, again []string
	for _, p := range unionKeys(before, after) {
		b, inB := before[p]
		a, inA := after[p]
		switch {
		case inB == inA && a == b:
		case backToMerged(merged, p, a, inA):
			reverted = append(reverted, p)
		case backToMerged(merged, p, b, inB):
			again = append(again, p)
		case !inB:
			lines = append(lines, fmt.Sprintf("      + %s (new)", p))
		case !inA:
			lines = append(lines, fmt.Sprintf("      - %s (removed)", p))
		default:
			lines = append(lines, fmt.Sprintf("      ~ %s", p))
			lines = append(lines, changedLines(b, a)...)
		}
	}
	if len(lines) == 0 && len(reverted) == 0 && len(again) == 0 {
		fmt.Fprintf(w.out, "  What this step changed in pull request kalypso/%s: nothing.\n", env)
		return
	}
	fmt.Fprintf(w.out, "  What this step changed in pull request kalypso/%s:\n", env)
	if len(lines) > 0 {
		fmt.Fprintln(w.out, strings.Join(lines, "\n"))
	}
	if len(reverted) > 0 {
		fmt.Fprintf(w.out, "    No longer proposed (back to their merged content): %s\n", strings.Join(reverted, ", "))
	}
	if len(again) > 0 {
		fmt.Fprintf(w.out, "    Proposed again: %s\n", strings.Join(again, ", "))
	}
}

// backToMerged reports whether a file of the pull request is again as it was merged: present
// with the merged content, or absent as it is from the merged branch.
func backToMerged(merged map[string]string, p, content string, present bool) bool {
	m, inMerged := merged[p]
	return present == inMerged && (!present || m == content)
}

// changedLines shows the lines of b that a replaced, and the lines that replaced them.
func changedLines(b, a string) []string {
	bl, al := strings.Split(b, "\n"), strings.Split(a, "\n")
	var out []string
	for i := 0; i < max(len(bl), len(al)) && len(out) < maxShownLines; i++ {
		var x, y string
		if i < len(bl) {
			x = bl[i]
		}
		if i < len(al) {
			y = al[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("          %s  →  %s", strings.TrimSpace(x), strings.TrimSpace(y)))
		}
	}
	return out
}

func unionKeys(a, b map[string]string) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
