package ghfake

import "github.com/kalypso-gitops/kalypso/internal/ghport"

// GitHub's page sizes: per_page defaults to 30 and is at most 100.
const (
	defaultPerPage = 30
	maxPerPage     = 100
)

// pageOf returns page (from 1; 0 is 1) of items, per items a page as GitHub sizes it from a
// per_page parameter, and the number of the next page, 0 after the last (GitHub's Link
// header rel="next", go-github's Response.NextPage).
func pageOf[T any](items []T, page, perPage int) ([]T, int) {
	per := perPage
	if per <= 0 {
		per = defaultPerPage
	}
	per = min(per, maxPerPage)
	page = max(page, 1)
	start := min((page-1)*per, len(items))
	end := min(start+per, len(items))
	next := 0
	if end < len(items) {
		next = page + 1
	}
	return items[start:end], next
}

// Limits implements ghport.GitHub: the fake's Lists.
func (g *GitHub) Limits() ghport.Limits {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.Lists
}
