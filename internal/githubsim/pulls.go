package githubsim

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// pullRequest is a simulated pull request; it is guarded by its repo's mu.
type pullRequest struct {
	id                  int64
	number              int
	title, body         string
	state               string
	head, base          string
	headSHA, baseSHA    string
	user                string
	draft               bool
	maintainerCanModify bool
	createdAt           time.Time
	updatedAt           time.Time
	closedAt            time.Time
	mergedAt            time.Time
	merged              bool
	mergeCommitSHA      string
	mergedBy            string
	labels              []string
	fork                string // the owner of the fork the head branch is on; "" for this repository
}

func (rp *repo) pull(number int) *pullRequest {
	for _, pr := range rp.pulls {
		if pr.number == number {
			return pr
		}
	}
	return nil
}

func (c *call) pull() (*pullRequest, error) {
	n, err := c.intParam("pull_number")
	if err != nil {
		return nil, err
	}
	pr := c.repo.pull(int(n))
	if pr == nil {
		return nil, notFound()
	}
	return pr, nil
}

type newPullInput struct {
	Title               *string `json:"title"`
	Head                string  `json:"head"`
	Base                string  `json:"base"`
	Body                *string `json:"body"`
	Draft               bool    `json:"draft"`
	MaintainerCanModify *bool   `json:"maintainer_can_modify"`
}

func (s *Server) createPull(c *call) (int, any, error) {
	var in newPullInput
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	pr, err := s.openPull(rp, c.actor, in)
	if err != nil {
		return 0, nil, err
	}
	c.emit(s.pullEvent(rp, pr, "opened", c.actor, nil))
	m, err := s.pullMap(rp, pr, true)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, m, nil
}

// openPull validates and records a new pull request. The caller holds rp.mu.
func (s *Server) openPull(rp *repo, user string, in newPullInput) (*pullRequest, error) {
	if in.Title == nil || *in.Title == "" {
		return nil, validation("PullRequest", "title", "title is missing")
	}
	head := in.Head
	if owner, branch, ok := strings.Cut(head, ":"); ok {
		if !strings.EqualFold(owner, rp.owner) {
			return nil, validation("PullRequest", "head", "head %s is not a branch of %s", in.Head, rp.fullName())
		}
		head = branch
	}
	headSHA, ok := rp.branchHash(head)
	if !ok {
		return nil, validation("PullRequest", "head", "head branch %s does not exist", head)
	}
	baseSHA, ok := rp.branchHash(in.Base)
	if !ok {
		return nil, validation("PullRequest", "base", "base branch %s does not exist", in.Base)
	}
	for _, pr := range rp.pulls {
		if pr.state == "open" && pr.head == head && pr.base == in.Base {
			return nil, validation("PullRequest", "", "A pull request already exists for %s:%s.", rp.owner, head)
		}
	}
	if done, err := rp.isAncestor(headSHA, baseSHA); err != nil || done {
		return nil, validation("PullRequest", "", "No commits between %s and %s", in.Base, head)
	}
	now := s.now()
	pr := &pullRequest{
		id: s.nextID(), number: rp.nextNumber, title: *in.Title, state: "open",
		head: head, base: in.Base, headSHA: headSHA.String(), baseSHA: baseSHA.String(),
		user: user, draft: in.Draft, maintainerCanModify: in.MaintainerCanModify == nil || *in.MaintainerCanModify,
		createdAt: now, updatedAt: now,
	}
	if in.Body != nil {
		pr.body = *in.Body
	}
	rp.nextNumber++
	rp.pulls = append(rp.pulls, pr)
	return pr, rp.setPullRef(pr)
}

// setPullRef keeps refs/pull/N/head pointing at the head commit, and refs/pull/N/merge at
// GitHub's test merge of the head into the base's tip (no merge ref when they conflict).
func (rp *repo) setPullRef(pr *pullRequest) error {
	name := plumbing.ReferenceName("refs/pull/" + itoa(pr.number) + "/head")
	if err := rp.git.Storer.SetReference(plumbing.NewHashReference(name, plumbing.NewHash(pr.headSHA))); err != nil {
		return err
	}
	return rp.setMergeRef(pr)
}

func (rp *repo) setMergeRef(pr *pullRequest) error {
	name := plumbing.ReferenceName("refs/pull/" + itoa(pr.number) + "/merge")
	head := plumbing.NewHash(pr.headSHA)
	tip, ok := rp.branchHash(pr.base)
	if ok {
		tree, err := rp.mergeResult(tip, head)
		switch {
		case err == nil:
			hc, err := rp.commitObj(head)
			if err != nil {
				return err
			}
			sig := object.Signature{Name: "GitHub", Email: "noreply@github.com", When: hc.Committer.When}
			merge, err := rp.writeCommit(&object.Commit{Author: sig, Committer: sig, TreeHash: tree, ParentHashes: []plumbing.Hash{tip, head},
				Message: "Merge " + pr.headSHA + " into " + tip.String()})
			if err != nil {
				return err
			}
			return rp.git.Storer.SetReference(plumbing.NewHashReference(name, merge))
		case !errors.Is(err, errConflict):
			return err
		}
	}
	if err := rp.git.Storer.RemoveReference(name); err != nil && !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return err
	}
	return nil
}

func (s *Server) listPulls(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	state := c.query("state")
	if state == "" {
		state = "open"
	}
	head := c.query("head")
	if _, branch, ok := strings.Cut(head, ":"); ok {
		head = branch
	}
	var out []map[string]any
	for _, pr := range sortedPulls(rp.pulls, c.query("sort"), c.query("direction")) {
		if (state != "all" && pr.state != state) || (head != "" && pr.head != head) ||
			(c.query("base") != "" && pr.base != c.query("base")) {
			continue
		}
		m, err := s.pullMap(rp, pr, false)
		if err != nil {
			return 0, nil, err
		}
		out = append(out, m)
	}
	if out == nil {
		out = []map[string]any{}
	}
	return http.StatusOK, paginate(c, out), nil
}

func sortedPulls(pulls []*pullRequest, by, direction string) []*pullRequest {
	out := append([]*pullRequest{}, pulls...)
	if by == "updated" {
		sortBy(out, func(p *pullRequest) int64 { return p.updatedAt.UnixNano()*1000 + int64(p.number) })
	} else {
		sortBy(out, func(p *pullRequest) int { return p.number })
	}
	if direction != "asc" {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

func (s *Server) getPull(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	pr, err := c.pull()
	if err != nil {
		return 0, nil, err
	}
	m, err := s.pullMap(rp, pr, true)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, m, nil
}

func (s *Server) pullFiles(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	pr, err := c.pull()
	if err != nil {
		return 0, nil, err
	}
	diffs, err := s.pullDiff(rp, pr)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, paginate(c, s.diffEntries(rp, pr.headSHA, diffs)), nil
}

// pullDiff lists files changed between the merge base and the head.
func (s *Server) pullDiff(rp *repo, pr *pullRequest) ([]fileDiff, error) {
	head, base := plumbing.NewHash(pr.headSHA), plumbing.NewHash(pr.baseSHA)
	mb, ok, err := rp.mergeBase(base, head)
	if err != nil {
		return nil, err
	}
	from := plumbing.ZeroHash
	if ok {
		mbc, err := rp.commitObj(mb)
		if err != nil {
			return nil, err
		}
		from = mbc.TreeHash
	}
	hc, err := rp.commitObj(head)
	if err != nil {
		return nil, err
	}
	return rp.diffTrees(from, hc.TreeHash)
}
