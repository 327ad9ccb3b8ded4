package preview

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the line-matching work for one file (old lines × new lines); a larger
// file is shown as all of its old lines removed and all of its new lines added.
const maxDiffCells = 4_000_000

// FileDiff is the unified diff of one file with the whole file as context: one hunk holding
// every line. old or cur is nil when the file is added or removed.
func FileDiff(path string, old, cur []byte) string {
	var b strings.Builder
	from, to := "a/"+path, "b/"+path
	if old == nil {
		from = "/dev/null"
	}
	if cur == nil {
		to = "/dev/null"
	}
	a, c := lines(old), lines(cur)
	fmt.Fprintf(&b, "--- %s\n+++ %s\n@@ -%s +%s @@\n", from, to, hunkRange(len(a)), hunkRange(len(c)))
	for _, op := range diffLines(a, c) {
		b.WriteByte(op.kind)
		b.WriteString(op.text)
		if !strings.HasSuffix(op.text, "\n") {
			b.WriteString("\n\\ No newline at end of file\n")
		}
	}
	return b.String()
}

func hunkRange(n int) string {
	if n == 0 {
		return "0,0"
	}
	return fmt.Sprintf("1,%d", n)
}

// lines splits content into lines that keep their newline.
func lines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	out := strings.SplitAfter(string(data), "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

type lineOp struct {
	kind byte // ' ', '-' or '+'
	text string
}

// diffLines matches the longest common subsequence of lines and lists the whole file.
func diffLines(a, b []string) []lineOp {
	if len(a)*len(b) > maxDiffCells {
		return replaceAll(a, b)
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []lineOp
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			ops = append(ops, lineOp{' ', a[i]})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			ops = append(ops, lineOp{'-', a[i]})
			i++
		default:
			ops = append(ops, lineOp{'+', b[j]})
			j++
		}
	}
	return append(ops, replaceAll(a[i:], b[j:])...)
}

func replaceAll(a, b []string) []lineOp {
	ops := make([]lineOp, 0, len(a)+len(b))
	for _, l := range a {
		ops = append(ops, lineOp{'-', l})
	}
	for _, l := range b {
		ops = append(ops, lineOp{'+', l})
	}
	return ops
}
