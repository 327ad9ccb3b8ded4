package githubsim

import (
	"net/http"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

var noreplyEmail = regexp.MustCompile(`^\d+\+([^@]+)@users\.noreply\.github\.com$`)

// accountFor maps a commit e-mail written by this simulator back to a user.
func (s *Server) accountFor(email string) any {
	if m := noreplyEmail.FindStringSubmatch(email); m != nil {
		return s.userMap(m[1])
	}
	return nil
}

// commitMap is the REST "commit" object (without stats and files).
func (s *Server) commitMap(rp *repo, c *object.Commit) map[string]any {
	sha := c.Hash.String()
	api := s.base() + "/api/v3/repos/" + rp.fullName()
	parents := []map[string]any{}
	for _, p := range c.ParentHashes {
		parents = append(parents, map[string]any{
			"sha": p.String(), "url": api + "/commits/" + p.String(), "html_url": s.htmlCommitURL(rp, p.String()),
		})
	}
	return map[string]any{
		"url": api + "/commits/" + sha, "sha": sha, "node_id": nodeID("Commit", rp.id) + sha[:8],
		"html_url": s.htmlCommitURL(rp, sha), "comments_url": api + "/commits/" + sha + "/comments",
		"commit": map[string]any{
			"url": s.gitURL(rp, "commits", sha), "author": signatureMap(c.Author),
			"committer": signatureMap(c.Committer), "message": c.Message, "comment_count": 0,
			"tree":         map[string]any{"sha": c.TreeHash.String(), "url": s.gitURL(rp, "trees", c.TreeHash.String())},
			"verification": unsignedVerification(),
		},
		"author": s.accountFor(c.Author.Email), "committer": s.accountFor(c.Committer.Email),
		"parents": parents,
	}
}

// fullCommitMap adds stats and files against the first parent.
func (s *Server) fullCommitMap(rp *repo, c *object.Commit) (map[string]any, error) {
	m := s.commitMap(rp, c)
	parentTree := plumbing.ZeroHash
	if len(c.ParentHashes) > 0 {
		p, err := rp.commitObj(c.ParentHashes[0])
		if err != nil {
			return nil, err
		}
		parentTree = p.TreeHash
	}
	diffs, err := rp.diffTrees(parentTree, c.TreeHash)
	if err != nil {
		return nil, err
	}
	add, del := 0, 0
	for _, d := range diffs {
		add, del = add+d.additions, del+d.deletions
	}
	m["stats"] = map[string]any{"additions": add, "deletions": del, "total": add + del}
	m["files"] = s.diffEntries(rp, c.Hash.String(), diffs)
	return m, nil
}

func (s *Server) getCommit(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	cm, err := rp.resolve(c.params["ref"])
	if err != nil {
		return 0, nil, unprocessable("No commit found for SHA: %s", c.params["ref"])
	}
	m, err := s.fullCommitMap(rp, cm)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, m, nil
}

func (s *Server) listCommits(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	start := c.query("sha")
	if start == "" {
		start = rp.defaultBranch
	}
	tip, err := rp.resolve(start)
	if err != nil {
		if _, ok := rp.branchHash(rp.defaultBranch); !ok && c.query("sha") == "" {
			return 0, nil, newError(http.StatusConflict, "Git Repository is empty.")
		}
		return 0, nil, notFound()
	}
	commits, err := rp.history(tip, strings.Trim(c.query("path"), "/"))
	if err != nil {
		return 0, nil, err
	}
	out := make([]map[string]any, 0, len(commits))
	for _, cm := range commits {
		out = append(out, s.commitMap(rp, cm))
	}
	return http.StatusOK, paginate(c, out), nil
}

// history lists commits from tip, newest first by committer date; with a
// path it follows git's default history simplification.
func (rp *repo) history(tip *object.Commit, path string) ([]*object.Commit, error) {
	var out []*object.Commit
	queue := []*object.Commit{tip}
	seen := map[plumbing.Hash]bool{tip.Hash: true}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		include, follow, err := rp.simplify(c, path)
		if err != nil {
			return nil, err
		}
		if include {
			out = append(out, c)
		}
		for _, p := range follow {
			if seen[p] {
				continue
			}
			seen[p] = true
			pc, err := rp.commitObj(p)
			if err != nil {
				return nil, err
			}
			queue = insertByDate(queue, pc)
		}
	}
	return out, nil
}

func insertByDate(queue []*object.Commit, c *object.Commit) []*object.Commit {
	i := 0
	for i < len(queue) && !queue[i].Committer.When.Before(c.Committer.When) {
		i++
	}
	queue = append(queue, nil)
	copy(queue[i+1:], queue[i:])
	queue[i] = c
	return queue
}

// simplify says whether c touches path and which parents to walk.
func (rp *repo) simplify(c *object.Commit, path string) (bool, []plumbing.Hash, error) {
	if path == "" {
		return true, c.ParentHashes, nil
	}
	mine := rp.pathHash(c.TreeHash, path)
	if len(c.ParentHashes) == 0 {
		return !mine.IsZero(), nil, nil
	}
	for _, p := range c.ParentHashes {
		pc, err := rp.commitObj(p)
		if err != nil {
			return false, nil, err
		}
		if rp.pathHash(pc.TreeHash, path) == mine {
			return false, []plumbing.Hash{p}, nil
		}
	}
	return true, c.ParentHashes, nil
}

func (rp *repo) pathHash(tree plumbing.Hash, path string) plumbing.Hash {
	en, err := rp.entryAt(tree, path)
	if err != nil {
		return plumbing.ZeroHash
	}
	return en.Hash
}
