package githubsim

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// withRepo runs fn with the repository locked, then delivers its webhooks.
func (s *Server) withRepo(owner, name string, fn func(rp *repo) ([]*hookEvent, error)) error {
	rp, err := s.mustRepo(owner, name)
	if err != nil {
		return err
	}
	rp.mu.Lock()
	events, err := fn(rp)
	rp.mu.Unlock()
	s.hooks.deliver(events)
	return err
}

// CommitFiles commits files (nil content deletes) on branch as the default
// user, straight into the bare repository, and sends a push webhook. A new
// branch starts from the default branch, or as a root commit in an empty repository.
func (s *Server) CommitFiles(owner, repoName, branch string, files map[string]*string, message string) (string, error) {
	var sha string
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		c, err := s.commitOnBranch(rp, branch, files, message)
		if err != nil {
			return nil, err
		}
		sha = c.String()
		return s.writeRef(rp, "refs/heads/"+branch, c, s.opts.DefaultUser)
	})
	if err != nil {
		return "", fmt.Errorf("githubsim: commit files: %w", err)
	}
	return sha, nil
}

func (s *Server) commitOnBranch(rp *repo, branch string, files map[string]*string, message string) (plumbing.Hash, error) {
	parent, ok := rp.branchHash(branch)
	if !ok {
		parent, _ = rp.branchHash(rp.defaultBranch)
	}
	return s.commitOn(rp, parent, files, message)
}

// commitOn writes a commit of files over parent (zero: a root commit) without moving any ref.
func (s *Server) commitOn(rp *repo, parent plumbing.Hash, files map[string]*string, message string) (plumbing.Hash, error) {
	baseTree := plumbing.ZeroHash
	var parents []plumbing.Hash
	if !parent.IsZero() {
		pc, err := rp.commitObj(parent)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		baseTree, parents = pc.TreeHash, []plumbing.Hash{parent}
	}
	ed, err := rp.newTreeEditor(baseTree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for p, content := range files {
		if err := s.applyFile(rp, ed, p, content); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	tree, err := ed.write()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	name, email := s.gitIdentity(s.opts.DefaultUser)
	sig := object.Signature{Name: name, Email: email, When: s.now()}
	return rp.writeCommit(&object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: tree, ParentHashes: parents})
}

func (s *Server) applyFile(rp *repo, ed *treeEditor, p string, content *string) error {
	if content == nil {
		if err := ed.remove(p); err != nil && !isNoObject(err) {
			return err
		}
		return nil
	}
	h, err := rp.writeBlob([]byte(*content))
	if err != nil {
		return err
	}
	return ed.set(p, filemode.Regular, h)
}

// ReadFile returns the content of path at ref (branch, tag or SHA).
func (s *Server) ReadFile(owner, repoName, ref, path string) (string, error) {
	var out string
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		c, err := rp.resolve(ref)
		if err != nil {
			return nil, err
		}
		en, err := rp.entryAt(c.TreeHash, path)
		if err != nil {
			return nil, err
		}
		data, err := rp.blobData(en.Hash)
		out = string(data)
		return nil, err
	})
	if err != nil {
		return "", fmt.Errorf("githubsim: read %s at %s: %w", path, ref, err)
	}
	return out, nil
}

// Tree returns every file at ref as path → content.
func (s *Server) Tree(owner, repoName, ref string) (map[string]string, error) {
	out := map[string]string{}
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		c, err := rp.resolve(ref)
		if err != nil {
			return nil, err
		}
		files, err := rp.flatten(c.TreeHash)
		if err != nil {
			return nil, err
		}
		for p, e := range files {
			if e.mode == filemode.Submodule {
				continue
			}
			data, err := rp.blobData(e.hash)
			if err != nil {
				return nil, err
			}
			out[p] = string(data)
		}
		return nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("githubsim: tree at %s: %w", ref, err)
	}
	return out, nil
}

// BranchSHA returns the commit a branch points at.
func (s *Server) BranchSHA(owner, repoName, branch string) (string, error) {
	var sha string
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		h, ok := rp.branchHash(branch)
		if !ok {
			return nil, fmt.Errorf("branch %s: %w", branch, errNoObject)
		}
		sha = h.String()
		return nil, nil
	})
	if err != nil {
		return "", fmt.Errorf("githubsim: %w", err)
	}
	return sha, nil
}

// Branches returns every branch as name → commit SHA.
func (s *Server) Branches(owner, repoName string) (map[string]string, error) {
	out := map[string]string{}
	err := s.withRepo(owner, repoName, func(rp *repo) ([]*hookEvent, error) {
		refs, err := rp.refs()
		for name, h := range refs {
			if b := trimRefPrefix(name); b != name && name == "refs/heads/"+b {
				out[b] = h.String()
			}
		}
		return nil, err
	})
	if err != nil {
		return nil, fmt.Errorf("githubsim: branches: %w", err)
	}
	return out, nil
}
