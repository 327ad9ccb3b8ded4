package githubsim

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// OpenForkPR opens a pull request into base from branch "patch" of forkOwner's fork, as user,
// and sends pull_request opened. The fork's commit, files over base's head, is only reachable
// through refs/pull/N/head of the base repository: the fork itself is not served. It returns
// the number and the head commit.
func (s *Server) OpenForkPR(owner, repoName, forkOwner, base string, files map[string]*string, title, user string) (int, string, error) {
	var number int
	var sha string
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		baseSHA, head, err := s.commitOnBase(rp, base, files, title)
		if err != nil {
			return nil, err
		}
		now := s.now()
		pr := &pullRequest{id: s.nextID(), number: rp.nextNumber, title: title, state: "open", head: "patch", base: base,
			headSHA: head.String(), baseSHA: baseSHA.String(), user: user, fork: forkOwner, createdAt: now, updatedAt: now}
		rp.nextNumber++
		rp.pulls = append(rp.pulls, pr)
		number, sha = pr.number, pr.headSHA
		return []*hookEvent{s.pullEvent(rp, pr, "opened", user, nil)}, rp.setPullRef(pr)
	})
	if err != nil {
		return 0, "", fmt.Errorf("githubsim: open fork pull request: %w", err)
	}
	return number, sha, nil
}

// PushForkPR pushes a commit of files to the fork's head of a pull request OpenForkPR opened
// and sends pull_request synchronize. It returns the new head commit.
func (s *Server) PushForkPR(owner, repoName string, number int, files map[string]*string, message string) (string, error) {
	var sha string
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		pr := rp.pull(number)
		if pr == nil || pr.fork == "" {
			return nil, fmt.Errorf("fork pull request #%d: %w", number, errNoObject)
		}
		head, err := s.commitOn(rp, plumbing.NewHash(pr.headSHA), files, message)
		if err != nil {
			return nil, err
		}
		sha = head.String()
		return []*hookEvent{s.headMoved(rp, pr, plumbing.NewHash(pr.headSHA), head, pr.user)}, nil
	})
	if err != nil {
		return "", fmt.Errorf("githubsim: push to fork pull request: %w", err)
	}
	return sha, nil
}

// commitOnBase writes a commit of files over the head of branch base without moving any ref;
// it returns base's head and the new commit.
func (s *Server) commitOnBase(rp *repo, base string, files map[string]*string, message string) (plumbing.Hash, plumbing.Hash, error) {
	baseSHA, ok := rp.branchHash(base)
	if !ok {
		return plumbing.ZeroHash, plumbing.ZeroHash, fmt.Errorf("base branch %s: %w", base, errNoObject)
	}
	head, err := s.commitOn(rp, baseSHA, files, message)
	return baseSHA, head, err
}
