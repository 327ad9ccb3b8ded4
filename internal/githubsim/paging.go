package githubsim

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// paginate returns the requested page of items (per_page default 30, at
// most 100) and sets a GitHub-style Link header.
func paginate[T any](c *call, items []T) []T {
	per := atoiDefault(c.query("per_page"), 30)
	if per < 1 {
		per = 30
	}
	if per > 100 {
		per = 100
	}
	page := atoiDefault(c.query("page"), 1)
	if page < 1 {
		page = 1
	}
	last := (len(items) + per - 1) / per
	if last < 1 {
		last = 1
	}
	c.setLinks(page, last)
	start := (page - 1) * per
	if start >= len(items) {
		return []T{}
	}
	end := start + per
	if end > len(items) {
		end = len(items)
	}
	return items[start:end]
}

func (c *call) setLinks(page, last int) {
	var links []string
	add := func(p int, rel string) {
		u := *c.r.URL
		q := u.Query()
		q.Set("page", strconv.Itoa(p))
		u.RawQuery = q.Encode()
		links = append(links, fmt.Sprintf(`<%s%s>; rel="%s"`, c.s.base(), u.RequestURI(), rel))
	}
	if page < last {
		add(page+1, "next")
		add(last, "last")
	}
	if page > 1 {
		add(1, "first")
		add(page-1, "prev")
	}
	if len(links) > 0 {
		c.header.Set("Link", strings.Join(links, ", "))
	}
}

func atoiDefault(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}

// pathEscape escapes each segment of a slash-separated path.
func pathEscape(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}
