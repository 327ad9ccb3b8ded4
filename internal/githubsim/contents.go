package githubsim

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// rawBody is a non-JSON response body.
type rawBody struct {
	data        []byte
	contentType string
}

func contentType(m filemode.FileMode) string {
	switch m {
	case filemode.Dir:
		return "dir"
	case filemode.Submodule:
		return "submodule"
	case filemode.Symlink:
		return "symlink"
	}
	return "file"
}

// contentMap describes a file or directory entry of the contents API.
func (s *Server) contentMap(rp *repo, ref, p string, en object.TreeEntry) map[string]any {
	api := s.base() + "/api/v3/repos/" + rp.fullName()
	self := api + "/contents/" + pathEscape(p) + "?ref=" + url.QueryEscape(ref)
	typ := contentType(en.Mode)
	html := s.base() + "/" + rp.fullName() + "/blob/" + ref + "/" + pathEscape(p)
	git := s.gitURL(rp, "blobs", en.Hash.String())
	var download any = self + "&raw=1"
	size := int64(0)
	if typ == "dir" {
		html = s.base() + "/" + rp.fullName() + "/tree/" + ref + "/" + pathEscape(p)
		git, download = s.gitURL(rp, "trees", en.Hash.String()), nil
	} else if o, err := rp.git.Storer.EncodedObject(plumbing.BlobObject, en.Hash); err == nil {
		size = o.Size()
	}
	return map[string]any{
		"type": typ, "size": size, "name": path.Base(p), "path": p, "sha": en.Hash.String(),
		"url": self, "git_url": git, "html_url": html, "download_url": download,
		"_links": map[string]any{"self": self, "git": git, "html": html},
	}
}

func (s *Server) getContents(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	ref := c.query("ref")
	if ref == "" {
		ref = rp.defaultBranch
	}
	cm, err := rp.resolve(ref)
	if err != nil {
		return 0, nil, notFoundMsg("No commit found for the ref %s", ref)
	}
	p := strings.Trim(c.params["path"], "/")
	en, err := rp.entryAt(cm.TreeHash, p)
	if err != nil {
		return 0, nil, notFound()
	}
	if en.Mode == filemode.Dir {
		return s.dirContents(rp, ref, p, en.Hash)
	}
	data, err := rp.blobData(en.Hash)
	if err != nil {
		return 0, nil, err
	}
	if c.query("raw") == "1" || wantsRaw(c) {
		return http.StatusOK, rawBody{data: data, contentType: "application/octet-stream"}, nil
	}
	m := s.contentMap(rp, ref, p, en)
	m["content"], m["encoding"] = base64Lines(data), "base64"
	if en.Mode == filemode.Symlink {
		m["target"] = string(data)
	}
	return http.StatusOK, m, nil
}

func (s *Server) dirContents(rp *repo, ref, p string, h plumbing.Hash) (int, any, error) {
	t, err := rp.treeObj(h)
	if err != nil {
		return 0, nil, err
	}
	out := make([]map[string]any, 0, len(t.Entries))
	for _, en := range t.Entries {
		out = append(out, s.contentMap(rp, ref, strings.TrimPrefix(p+"/"+en.Name, "/"), en))
	}
	return http.StatusOK, out, nil
}

type putContentInput struct {
	Message   string        `json:"message"`
	Content   *string       `json:"content"`
	SHA       string        `json:"sha"`
	Branch    string        `json:"branch"`
	Author    *gitUserInput `json:"author"`
	Committer *gitUserInput `json:"committer"`
}

func (s *Server) putContents(c *call) (int, any, error) {
	var in putContentInput
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	if in.Content == nil || in.Message == "" {
		return 0, nil, validation("Content", "", "message and content are required")
	}
	data, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(*in.Content, "\n", ""))
	if err != nil {
		return 0, nil, validation("Content", "content", "content is not valid Base64")
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if in.Branch == "" {
		in.Branch = rp.defaultBranch
	}
	p := strings.Trim(c.params["path"], "/")
	cm, created, err := s.commitFile(c, p, data, in)
	if err != nil {
		return 0, nil, err
	}
	en, err := rp.entryAt(cm.TreeHash, p)
	if err != nil {
		return 0, nil, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return status, map[string]any{"content": s.contentMap(rp, in.Branch, p, en), "commit": s.gitCommitMap(rp, cm)}, nil
}

// commitFile writes one file on in.Branch through a new commit.
func (s *Server) commitFile(c *call, p string, data []byte, in putContentInput) (*object.Commit, bool, error) {
	rp := c.repo
	tip, hasTip := rp.branchHash(in.Branch)
	refs, err := rp.refs()
	if err != nil {
		return nil, false, err
	}
	if !hasTip && len(refs) > 0 {
		return nil, false, notFoundMsg("Branch %s not found", in.Branch)
	}
	baseTree, parents := plumbing.ZeroHash, []string{}
	if hasTip {
		tc, err := rp.commitObj(tip)
		if err != nil {
			return nil, false, err
		}
		baseTree, parents = tc.TreeHash, []string{tip.String()}
	}
	existing := rp.pathHash(baseTree, p)
	if err := checkContentSHA(p, existing, in.SHA); err != nil {
		return nil, false, err
	}
	blob, err := rp.writeBlob(data)
	if err != nil {
		return nil, false, err
	}
	tree, err := s.editTree(rp, baseTree, map[string]*plumbing.Hash{p: &blob})
	if err != nil {
		return nil, false, err
	}
	cm, err := s.newCommit(rp, c.actor, in.Message, tree.String(), parents, in.Author, in.Committer)
	if err != nil {
		return nil, false, err
	}
	events, err := s.writeRef(rp, "refs/heads/"+in.Branch, cm.Hash, c.actor)
	if err != nil {
		return nil, false, err
	}
	c.events = append(c.events, events...)
	return cm, existing.IsZero(), nil
}

func checkContentSHA(p string, existing plumbing.Hash, sha string) error {
	switch {
	case !existing.IsZero() && sha == "":
		return unprocessable("Invalid request.\n\n\"sha\" wasn't supplied.")
	case !existing.IsZero() && sha != existing.String():
		return newError(http.StatusConflict, "%s does not match %s", p, sha)
	}
	return nil
}

// editTree applies blob changes (nil = delete) to a tree. Deleting a
// missing file is ignored.
func (s *Server) editTree(rp *repo, base plumbing.Hash, files map[string]*plumbing.Hash) (plumbing.Hash, error) {
	ed, err := rp.newTreeEditor(base)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for p, h := range files {
		if h == nil {
			if err := ed.remove(p); err != nil && !isNoObject(err) {
				return plumbing.ZeroHash, err
			}
			continue
		}
		if err := ed.set(p, filemode.Regular, *h); err != nil {
			return plumbing.ZeroHash, unprocessable("invalid path %q: %v", p, err)
		}
	}
	return ed.write()
}

// wantsRaw reports a raw media type such as application/vnd.github.raw.
func wantsRaw(c *call) bool {
	return strings.Contains(c.r.Header.Get("Accept"), ".raw")
}
