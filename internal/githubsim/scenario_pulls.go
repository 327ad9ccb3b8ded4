package githubsim

import (
	"fmt"

	"github.com/google/go-github/v62/github"
)

// PullRequests returns every pull request of a repository, oldest first.
func (s *Server) PullRequests(owner, repoName string) []*github.PullRequest {
	var out []*github.PullRequest
	_ = s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		for _, pr := range rp.pulls {
			m, err := s.pullMap(rp, pr, false)
			if err != nil {
				return nil, err
			}
			if err := s.addPullCounters(rp, pr, m, false); err != nil {
				return nil, err
			}
			out = append(out, fromMap[github.PullRequest](m))
		}
		return nil, nil
	})
	return out
}

// PullRequest returns one pull request, with mergeability.
func (s *Server) PullRequest(owner, repoName string, number int) (*github.PullRequest, error) {
	var out *github.PullRequest
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		pr := rp.pull(number)
		if pr == nil {
			return nil, fmt.Errorf("pull request #%d: %w", number, errNoObject)
		}
		m, err := s.pullMap(rp, pr, true)
		out = fromMap[github.PullRequest](m)
		return nil, err
	})
	if err != nil {
		return nil, fmt.Errorf("githubsim: %w", err)
	}
	return out, nil
}

// OpenPR opens a pull request as a human user and sends pull_request opened.
func (s *Server) OpenPR(owner, repoName, head, base, title, body, user string) (int, error) {
	var number int
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		pr, err := s.openPull(rp, user, newPullInput{Title: &title, Head: head, Base: base, Body: &body})
		if err != nil {
			return nil, err
		}
		number = pr.number
		return []*hookEvent{s.pullEvent(rp, pr, "opened", user, nil)}, nil
	})
	if err != nil {
		return 0, fmt.Errorf("githubsim: open pull request: %w", err)
	}
	return number, nil
}

// MergePR merges a pull request as user with a merge commit, like the
// merge button, and returns the merge commit SHA.
func (s *Server) MergePR(owner, repoName string, number int, user string) (string, error) {
	var sha string
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		pr := rp.pull(number)
		if pr == nil {
			return nil, fmt.Errorf("pull request #%d: %w", number, errNoObject)
		}
		var events []*hookEvent
		var err error
		sha, events, err = s.performMerge(rp, pr, mergeInput{}, user)
		return events, err
	})
	if err != nil {
		return "", fmt.Errorf("githubsim: merge #%d: %w", number, err)
	}
	return sha, nil
}

// ClosePR closes a pull request without merging, as user.
func (s *Server) ClosePR(owner, repoName string, number int, user string) error {
	return s.setPRState(owner, repoName, number, "closed", user)
}

// ReopenPR reopens a closed, unmerged pull request, as user.
func (s *Server) ReopenPR(owner, repoName string, number int, user string) error {
	return s.setPRState(owner, repoName, number, "open", user)
}

func (s *Server) setPRState(owner, repoName string, number int, state, user string) error {
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		pr := rp.pull(number)
		if pr == nil {
			return nil, fmt.Errorf("pull request #%d: %w", number, errNoObject)
		}
		if pr.state == state {
			return nil, nil
		}
		ev, err := s.setPullState(rp, pr, state, user)
		return []*hookEvent{ev}, err
	})
	if err != nil {
		return fmt.Errorf("githubsim: set #%d %s: %w", number, state, err)
	}
	return nil
}

// Comments returns the conversation comments of a pull request, oldest first.
func (s *Server) Comments(owner, repoName string, number int) []*github.IssueComment {
	var out []*github.IssueComment
	_ = s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		for _, cm := range rp.comments {
			if cm.number == number {
				out = append(out, fromMap[github.IssueComment](s.commentMap(rp, cm)))
			}
		}
		return nil, nil
	})
	return out
}

// PostComment posts a conversation comment on a pull request as user (a person, or another
// App's bot when the login ends with [bot]), as if on GitHub. Only its author can edit it.
func (s *Server) PostComment(owner, repoName string, number int, user, body string) error {
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		if rp.pull(number) == nil {
			return nil, fmt.Errorf("pull request #%d: %w", number, errNoObject)
		}
		now := s.now()
		rp.comments = append(rp.comments, &issueComment{id: s.nextID(), number: number, user: user, body: body, createdAt: now, updatedAt: now})
		return nil, nil
	})
	if err != nil {
		return fmt.Errorf("githubsim: comment on #%d: %w", number, err)
	}
	return nil
}

// OpenBranchPR pushes branch, a commit of files over base's head, to the repository itself
// (as a user with write permission would) and opens a pull request from it into base as user:
// a pull request whose head is on the base repository, not a fork. It returns the number and
// the head commit.
func (s *Server) OpenBranchPR(owner, repoName, branch, base string, files map[string]*string, title, user string) (int, string, error) {
	var number int
	var sha string
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		if _, exists := rp.branchHash(branch); exists {
			return nil, fmt.Errorf("branch %s exists already", branch)
		}
		_, head, err := s.commitOnBase(rp, base, files, title)
		if err != nil {
			return nil, err
		}
		events, err := s.writeRef(rp, "refs/heads/"+branch, head, user)
		if err != nil {
			return nil, err
		}
		pr, err := s.openPull(rp, user, newPullInput{Title: &title, Head: branch, Base: base})
		if err != nil {
			return nil, err
		}
		number, sha = pr.number, pr.headSHA
		return append(events, s.pullEvent(rp, pr, "opened", user, nil)), nil
	})
	if err != nil {
		return 0, "", fmt.Errorf("githubsim: open pull request from a branch: %w", err)
	}
	return number, sha, nil
}
