package githubsim

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// mergeInput is the body of PUT …/pulls/{n}/merge.
type mergeInput struct {
	CommitTitle   string `json:"commit_title"`
	CommitMessage string `json:"commit_message"`
	SHA           string `json:"sha"`
	MergeMethod   string `json:"merge_method"`
}

func (s *Server) mergePull(c *call) (int, any, error) {
	var in mergeInput
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	pr, err := c.pull()
	if err != nil {
		return 0, nil, err
	}
	sha, events, err := s.performMerge(rp, pr, in, c.actor)
	if err != nil {
		return 0, nil, err
	}
	c.events = append(c.events, events...)
	return http.StatusOK, map[string]any{"sha": sha, "merged": true, "message": "Pull Request successfully merged"}, nil
}

// performMerge merges a pull request into its base branch. The caller holds rp.mu.
func (s *Server) performMerge(rp *repo, pr *pullRequest, in mergeInput, actor string) (string, []*hookEvent, error) {
	if pr.state != "open" {
		return "", nil, newError(http.StatusMethodNotAllowed, "Pull Request is not mergeable")
	}
	if in.SHA != "" && in.SHA != pr.headSHA {
		return "", nil, newError(http.StatusConflict, "Head branch was modified. Review and try the merge again.")
	}
	tip, ok := rp.branchHash(pr.base)
	if !ok {
		return "", nil, newError(http.StatusMethodNotAllowed, "Base branch was deleted")
	}
	result, err := s.mergeCommit(rp, pr, tip, in, actor)
	if err != nil {
		return "", nil, mergeError(err)
	}
	now := s.now()
	pr.state, pr.merged, pr.mergedBy, pr.mergeCommitSHA = "closed", true, actor, result.String()
	pr.mergedAt, pr.closedAt, pr.updatedAt, pr.baseSHA = now, now, now, tip.String()
	events, err := s.writeRef(rp, "refs/heads/"+pr.base, result, actor)
	if err != nil {
		return "", nil, err
	}
	events = append(events, s.pullEvent(rp, pr, "closed", actor, nil))
	return result.String(), events, nil
}

// mergeCommit writes the commit(s) of a merge, squash or rebase and returns the new base tip.
func (s *Server) mergeCommit(rp *repo, pr *pullRequest, tip plumbing.Hash, in mergeInput, actor string) (plumbing.Hash, error) {
	head := plumbing.NewHash(pr.headSHA)
	switch in.MergeMethod {
	case "", "merge":
		tree, err := rp.mergeResult(tip, head)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		title := firstNonEmpty(in.CommitTitle, fmt.Sprintf("Merge pull request #%d from %s/%s", pr.number, rp.owner, pr.head))
		msg := title + "\n\n" + firstNonEmpty(in.CommitMessage, pr.title)
		return s.webCommit(rp, actor, msg, tree, tip, head)
	case "squash":
		tree, err := rp.mergeResult(tip, head)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		msg, err := s.squashMessage(rp, pr, tip, in)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return s.webCommit(rp, actor, msg, tree, tip)
	case "rebase":
		return s.rebase(rp, tip, head)
	}
	return plumbing.ZeroHash, validation("PullRequest", "merge_method", "merge_method %q is not valid", in.MergeMethod)
}

func (s *Server) squashMessage(rp *repo, pr *pullRequest, tip plumbing.Hash, in mergeInput) (string, error) {
	title := firstNonEmpty(in.CommitTitle, fmt.Sprintf("%s (#%d)", pr.title, pr.number))
	if in.CommitMessage != "" {
		return title + "\n\n" + in.CommitMessage, nil
	}
	commits, err := rp.commitsBetween(tip, plumbing.NewHash(pr.headSHA))
	if err != nil {
		return "", err
	}
	var lines []string
	for _, c := range commits {
		lines = append(lines, "* "+strings.TrimSpace(c.Message))
	}
	return title + "\n\n" + strings.Join(lines, "\n\n"), nil
}

// rebase replays the head's commits on the base tip, one by one.
func (s *Server) rebase(rp *repo, tip, head plumbing.Hash) (plumbing.Hash, error) {
	commits, err := rp.commitsBetween(tip, head)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	cur := tip
	for _, c := range commits {
		if len(c.ParentHashes) != 1 {
			return plumbing.ZeroHash, newError(http.StatusMethodNotAllowed, "This branch can't be rebased")
		}
		if cur, err = s.replay(rp, cur, c); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return cur, nil
}

func (s *Server) replay(rp *repo, onto plumbing.Hash, c *object.Commit) (plumbing.Hash, error) {
	parent, err := rp.commitObj(c.ParentHashes[0])
	if err != nil {
		return plumbing.ZeroHash, err
	}
	oc, err := rp.commitObj(onto)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	tree, err := rp.mergeTrees(parent.TreeHash, oc.TreeHash, c.TreeHash)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	nc := &object.Commit{Author: c.Author, Committer: s.webSignature(), Message: c.Message, TreeHash: tree, ParentHashes: []plumbing.Hash{onto}}
	return rp.writeCommit(nc)
}

// webCommit writes a commit authored by actor and committed by GitHub.
func (s *Server) webCommit(rp *repo, actor, msg string, tree plumbing.Hash, parents ...plumbing.Hash) (plumbing.Hash, error) {
	name, email := s.gitIdentity(actor)
	c := &object.Commit{
		Author:    object.Signature{Name: name, Email: email, When: s.now()},
		Committer: s.webSignature(), Message: msg, TreeHash: tree, ParentHashes: parents,
	}
	return rp.writeCommit(c)
}

func (s *Server) webSignature() object.Signature {
	return object.Signature{Name: "GitHub", Email: "noreply@github.com", When: s.now()}
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
