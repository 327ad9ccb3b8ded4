package preview

import (
	"fmt"
	"strings"
)

// MaxCheckRunText is GitHub's limit on a check run's output text, in characters. Budgets are
// counted in bytes, which never undercounts characters.
const MaxCheckRunText = 65535

// footerReserve is kept free for the list of left-out names and the hint.
const footerReserve = 4096

// Markdown writes the sections as collapsible <details> blocks, each holding a diff, within
// budget bytes. Whole sections that do not fit are listed by name only (as many names as fit,
// then a count of the rest), followed by hint (e.g. how to see everything locally).
func Markdown(sections []Section, budget int, hint string) string {
	var b strings.Builder
	var left []string
	room := budget - footerReserve
	for _, s := range sections {
		block := detailsBlock(s)
		if b.Len()+len(block) > room {
			left = append(left, s.Name)
			continue
		}
		b.WriteString(block)
	}
	if len(left) == 0 {
		return b.String()
	}
	b.WriteString(leftOut(left, budget-b.Len()-len(hint)-2))
	b.WriteString("\n\n" + hint)
	return b.String()
}

func detailsBlock(s Section) string {
	fence := strings.Repeat("`", max(3, longestRun(s.Diff, '`')+1))
	return fmt.Sprintf("<details><summary>%s: %s</summary>\n\n%sdiff\n%s%s\n\n</details>\n\n", s.Name, s.Summary, fence, s.Diff, fence)
}

// leftOut lists the names of left-out sections within room bytes, then how many more.
func leftOut(names []string, room int) string {
	head := fmt.Sprintf("**%d of the changed assignments are too large to show here**: ", len(names))
	var b strings.Builder
	b.WriteString(head)
	for i, n := range names {
		sep := ", "
		if i == 0 {
			sep = ""
		}
		rest := fmt.Sprintf(" and %d more", len(names)-i)
		if b.Len()+len(sep)+len(n)+2+len(" and 99999999 more.") > room {
			b.WriteString(rest + ".")
			return b.String()
		}
		b.WriteString(sep + "`" + n + "`")
	}
	b.WriteString(".")
	return b.String()
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}
