package scheduling

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Source is a tree of files: one branch (or folder of it) of a repository at one commit.
type Source struct {
	FS     fs.FS  // the files, rooted at the repository (or folder) root
	Name   string // what the source is, e.g. "main", "dev", "workload platform-svc"
	Prefix string // put before every path in messages, e.g. "control-plane/dev/"
	Commit string // the commit the files come from, when known
}

// WorkloadSource finds the files a WorkloadRegistration points at.
type WorkloadSource interface {
	// Workload returns the source of a registration's repo and branch; the caller reads spec.path in it.
	Workload(spec ManifestsSpec) (Source, error)
}

// SubPath cleans a repository-relative path and refuses one that leaves the repository.
func SubPath(p string) (string, error) {
	var out []string
	for _, seg := range strings.Split(strings.TrimSpace(p), "/") {
		switch seg {
		case "", ".":
		case "..":
			if len(out) == 0 {
				return "", fmt.Errorf("path %q leaves the repository", p)
			}
			out = out[:len(out)-1]
		default:
			out = append(out, seg)
		}
	}
	return strings.Join(out, "/"), nil
}

// RepoSlug returns OWNER/REPO of a repository URL such as https://github.com/OWNER/REPO(.git).
func RepoSlug(repo string) (owner, name string, err error) {
	u, err := url.Parse(strings.TrimSpace(repo))
	if err != nil {
		return "", "", fmt.Errorf("repository URL %q: %w", repo, err)
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if u.Host == "" || len(parts) < 2 || parts[len(parts)-2] == "" || parts[len(parts)-1] == "" {
		return "", "", fmt.Errorf("repository URL %q is not of the form https://HOST/OWNER/REPO", repo)
	}
	owner, name = parts[len(parts)-2], strings.TrimSuffix(parts[len(parts)-1], ".git")
	if owner == ".." || name == ".." || owner == "." || name == "." {
		return "", "", fmt.Errorf("repository URL %q is not of the form https://HOST/OWNER/REPO", repo)
	}
	return owner, name, nil
}

// sourceIgnore reads the `.sourceignore` at the root of fsys (at most maxBytes of it).
func sourceIgnore(fsys fs.FS, maxBytes int64) (gitignore.Matcher, error) {
	info, err := fs.Stat(fsys, ".sourceignore")
	if errors.Is(err, fs.ErrNotExist) {
		return gitignore.NewMatcher(nil), nil
	}
	if err == nil && info.Size() > maxBytes {
		err = tooLarge(info.Size(), maxBytes)
	}
	var data []byte
	if err == nil {
		data, err = fs.ReadFile(fsys, ".sourceignore")
	}
	if err != nil {
		return nil, fmt.Errorf("read .sourceignore: %w", err)
	}
	var patterns []gitignore.Pattern
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		patterns = append(patterns, gitignore.ParsePattern(line, nil))
	}
	return gitignore.NewMatcher(patterns), nil
}

// TreeWorkloads finds a registration's files in fsys at OWNER/REPO/BRANCH, the layout of a
// folder of checked-out workload repositories; prefix is shown before paths in messages.
func TreeWorkloads(fsys fs.FS, prefix string) WorkloadSource {
	return treeWorkloads{fsys: fsys, prefix: prefix}
}

type treeWorkloads struct {
	fsys   fs.FS
	prefix string
}

// Workload implements WorkloadSource.
func (t treeWorkloads) Workload(spec ManifestsSpec) (Source, error) {
	owner, name, err := RepoSlug(spec.Repo)
	if err != nil {
		return Source{}, err
	}
	branch, err := SubPath(spec.Branch)
	if err != nil || branch == "" {
		return Source{}, fmt.Errorf("invalid branch %q", spec.Branch)
	}
	dir := owner + "/" + name + "/" + branch
	if st, err := fs.Stat(t.fsys, dir); err != nil || !st.IsDir() {
		return Source{}, fmt.Errorf("%s branch %s: no folder %s%s", spec.Repo, spec.Branch, t.prefix, dir)
	}
	sub, err := fs.Sub(t.fsys, dir)
	if err != nil {
		return Source{}, fmt.Errorf("%s: %w", dir, err)
	}
	return Source{FS: sub, Name: owner + "/" + name, Prefix: t.prefix + dir + "/"}, nil
}
