package render

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// maxNamed is how many assignments a grouped error names before "and N more".
const maxNamed = 3

// groupFailures turns the failures of many assignments that fail for the same reason at the
// same place into one error naming them, so a broken template used everywhere is one line.
func groupFailures(list []*scheduling.Assignment, failed map[string]*scheduling.Error) scheduling.Errors {
	type group struct {
		first *scheduling.Error
		keys  []string
	}
	if len(failed) == 0 {
		return nil
	}
	groups := map[string]*group{}
	var order []string
	for _, a := range list {
		e := failed[a.Key()]
		if e == nil {
			continue
		}
		for _, e := range append([]*scheduling.Error{e}, e.Also...) {
			shape := e.Pos.String() + "\x00" + e.Object + "\x00" + strings.Replace(e.Msg, a.Key(), "\x01", 1)
			g := groups[shape]
			if g == nil {
				g = &group{first: e}
				groups[shape] = g
				order = append(order, shape)
			}
			g.keys = append(g.keys, a.Key())
		}
	}
	out := make(scheduling.Errors, 0, len(order))
	for _, shape := range order {
		g := groups[shape]
		if len(g.keys) == 1 {
			c := *g.first
			c.Also = nil
			out = append(out, &c)
			continue
		}
		c := *g.first
		c.Also = nil
		c.Msg = strings.Replace(c.Msg, g.keys[0], describeKeys(g.keys), 1)
		out = append(out, &c)
	}
	return out
}

func describeKeys(keys []string) string {
	sort.Strings(keys)
	named := strings.Join(keys[:min(maxNamed, len(keys))], ", ")
	if len(keys) > maxNamed {
		named += fmt.Sprintf(" and %d more", len(keys)-maxNamed)
	}
	return fmt.Sprintf("%d assignments (%s)", len(keys), named)
}
