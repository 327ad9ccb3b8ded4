package githubsim

import (
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// comparison is the result of comparing base with head.
type comparison struct {
	status    string
	aheadBy   int
	behindBy  int
	base      *object.Commit
	head      *object.Commit
	mergeBase *object.Commit
	commits   []*object.Commit
}

// compareCommits computes what head has that base has not. The caller holds rp.mu.
func (rp *repo) compareCommits(base, head *object.Commit) (*comparison, error) {
	mb, ok, err := rp.mergeBase(base.Hash, head.Hash)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFoundMsg("No common ancestor between %s and %s.", base.Hash, head.Hash)
	}
	ahead, err := rp.commitsBetween(base.Hash, head.Hash)
	if err != nil {
		return nil, err
	}
	behind, err := rp.commitsBetween(head.Hash, base.Hash)
	if err != nil {
		return nil, err
	}
	mbc, err := rp.commitObj(mb)
	if err != nil {
		return nil, err
	}
	cmp := &comparison{aheadBy: len(ahead), behindBy: len(behind), base: base, head: head, mergeBase: mbc, commits: ahead}
	switch {
	case cmp.aheadBy == 0 && cmp.behindBy == 0:
		cmp.status = "identical"
	case cmp.behindBy == 0:
		cmp.status = "ahead"
	case cmp.aheadBy == 0:
		cmp.status = "behind"
	default:
		cmp.status = "diverged"
	}
	return cmp, nil
}

func notFoundMsg(format string, args ...any) *apiError {
	return newError(http.StatusNotFound, format, args...)
}

// splitBaseHead parses "base...head" (or "base..head"), dropping "owner:" prefixes.
func splitBaseHead(bh string) (string, string, bool) {
	base, head, ok := strings.Cut(bh, "...")
	if !ok {
		base, head, ok = strings.Cut(bh, "..")
	}
	if !ok || base == "" || head == "" {
		return "", "", false
	}
	strip := func(s string) string {
		if _, after, found := strings.Cut(s, ":"); found {
			return after
		}
		return s
	}
	return strip(base), strip(head), true
}

func (s *Server) compare(c *call) (int, any, error) {
	baseRef, headRef, ok := splitBaseHead(c.params["basehead"])
	if !ok {
		return 0, nil, notFound()
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	base, err := rp.resolve(baseRef)
	if err != nil {
		return 0, nil, notFound()
	}
	head, err := rp.resolve(headRef)
	if err != nil {
		return 0, nil, notFound()
	}
	cmp, err := rp.compareCommits(base, head)
	if err != nil {
		return 0, nil, err
	}
	body, err := s.comparisonMap(rp, c.params["basehead"], cmp)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, body, nil
}

func (s *Server) comparisonMap(rp *repo, basehead string, cmp *comparison) (map[string]any, error) {
	diffs, err := rp.diffTrees(cmp.mergeBase.TreeHash, cmp.head.TreeHash)
	if err != nil {
		return nil, err
	}
	commits := []map[string]any{}
	for i, cm := range cmp.commits {
		if i == 250 {
			break
		}
		commits = append(commits, s.commitMap(rp, cm))
	}
	html := s.base() + "/" + rp.fullName() + "/compare/" + basehead
	return map[string]any{
		"url":           s.base() + "/api/v3/repos/" + rp.fullName() + "/compare/" + basehead,
		"html_url":      html,
		"permalink_url": s.base() + "/" + rp.fullName() + "/compare/" + cmp.base.Hash.String() + "..." + cmp.head.Hash.String(),
		"diff_url":      html + ".diff", "patch_url": html + ".patch",
		"base_commit":       s.commitMap(rp, cmp.base),
		"merge_base_commit": s.commitMap(rp, cmp.mergeBase),
		"status":            cmp.status, "ahead_by": cmp.aheadBy, "behind_by": cmp.behindBy,
		"total_commits": cmp.aheadBy, "commits": commits,
		"files": s.diffEntries(rp, cmp.head.Hash.String(), diffs),
	}, nil
}
