package githubsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func modeString(m filemode.FileMode) string { return fmt.Sprintf("%06o", uint32(m)) }

func entryType(m filemode.FileMode) string {
	switch m {
	case filemode.Dir:
		return "tree"
	case filemode.Submodule:
		return "commit"
	}
	return "blob"
}

func (s *Server) gitURL(rp *repo, kind, sha string) string {
	return fmt.Sprintf("%s/api/v3/repos/%s/git/%s/%s", s.base(), rp.fullName(), kind, sha)
}

// treeEntryMap is one entry of a git-tree response.
func (s *Server) treeEntryMap(rp *repo, path string, en object.TreeEntry) map[string]any {
	typ := entryType(en.Mode)
	m := map[string]any{"path": path, "mode": modeString(en.Mode), "type": typ, "sha": en.Hash.String()}
	switch typ {
	case "blob":
		m["url"] = s.gitURL(rp, "blobs", en.Hash.String())
		if o, err := rp.git.Storer.EncodedObject(plumbing.BlobObject, en.Hash); err == nil {
			m["size"] = o.Size()
		}
	case "tree":
		m["url"] = s.gitURL(rp, "trees", en.Hash.String())
	}
	return m
}

// treeMap is the git-tree response for a tree, optionally recursive.
func (s *Server) treeMap(rp *repo, h plumbing.Hash, recursive bool) (map[string]any, error) {
	entries := []map[string]any{}
	if recursive {
		err := rp.walkTree(h, "", func(path string, en object.TreeEntry) error {
			entries = append(entries, s.treeEntryMap(rp, path, en))
			return nil
		})
		if err != nil {
			return nil, err
		}
	} else {
		t, err := rp.treeObj(h)
		if err != nil {
			return nil, err
		}
		for _, en := range t.Entries {
			entries = append(entries, s.treeEntryMap(rp, en.Name, en))
		}
	}
	return map[string]any{"sha": h.String(), "url": s.gitURL(rp, "trees", h.String()), "tree": entries, "truncated": false}, nil
}

// treeish resolves a tree SHA, a commit SHA or a ref name to a tree.
func (rp *repo) treeish(ref string) (plumbing.Hash, error) {
	if fullSHA.MatchString(ref) {
		h := plumbing.NewHash(ref)
		if typ, ok := rp.objectType(h); ok && typ == plumbing.TreeObject {
			return h, nil
		}
	}
	c, err := rp.resolve(ref)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return c.TreeHash, nil
}

func (s *Server) getTree(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	h, err := rp.treeish(c.params["tree_sha"])
	if err != nil {
		return 0, nil, notFound()
	}
	rec := c.query("recursive")
	m, err := s.treeMap(rp, h, rec != "" && rec != "0" && rec != "false")
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, m, nil
}

// treeEntryInput is one entry of a create-tree request; SHA keeps an
// explicit null apart from an absent key.
type treeEntryInput struct {
	Path    string          `json:"path"`
	Mode    string          `json:"mode"`
	Type    string          `json:"type"`
	SHA     json.RawMessage `json:"sha"`
	Content *string         `json:"content"`
}

func (s *Server) createTree(c *call) (int, any, error) {
	var in struct {
		BaseTree string           `json:"base_tree"`
		Tree     []treeEntryInput `json:"tree"`
	}
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	if in.Tree == nil {
		return 0, nil, validation("Tree", "tree", "tree is missing")
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	h, err := s.buildTree(rp, in.BaseTree, in.Tree)
	if err != nil {
		return 0, nil, err
	}
	m, err := s.treeMap(rp, h, false)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, m, nil
}

func (s *Server) buildTree(rp *repo, baseTree string, entries []treeEntryInput) (plumbing.Hash, error) {
	base := plumbing.ZeroHash
	if baseTree != "" {
		h, err := rp.treeish(baseTree)
		if err != nil {
			return plumbing.ZeroHash, unprocessable("base_tree %s is not a valid tree oid", baseTree)
		}
		base = h
	}
	ed, err := rp.newTreeEditor(base)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for i, en := range entries {
		if err := applyTreeEntry(rp, ed, en); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("tree.%d: %w", i, err)
		}
	}
	return ed.write()
}

func applyTreeEntry(rp *repo, ed *treeEditor, en treeEntryInput) error {
	mode, err := parseMode(en.Mode, en.Type)
	if err != nil {
		return err
	}
	sha, hasSHA, err := parseNullableSHA(en.SHA)
	if err != nil {
		return err
	}
	switch {
	case en.Content != nil && hasSHA:
		return unprocessable("Must supply either tree.sha or tree.content, not both")
	case en.Content != nil:
		if mode == filemode.Dir || mode == filemode.Submodule {
			return unprocessable("tree.content is only allowed for blobs")
		}
		h, err := rp.writeBlob([]byte(*en.Content))
		if err != nil {
			return err
		}
		return pathError(ed.set(en.Path, mode, h), en.Path)
	case !hasSHA:
		if err := ed.remove(en.Path); err != nil {
			return unprocessable("GitRPC::BadObjectState: cannot delete %q: it does not exist", en.Path)
		}
		return nil
	}
	if err := checkEntryObject(rp, mode, sha); err != nil {
		return err
	}
	return pathError(ed.set(en.Path, mode, sha), en.Path)
}

func pathError(err error, path string) error {
	if err != nil {
		return unprocessable("tree.path %q is invalid: %v", path, err)
	}
	return nil
}

func parseMode(mode, typ string) (filemode.FileMode, error) {
	want := map[string]string{"100644": "blob", "100755": "blob", "120000": "blob", "040000": "tree", "160000": "commit"}
	wantType, ok := want[mode]
	if !ok {
		return 0, unprocessable("tree.mode %q is invalid", mode)
	}
	if typ != "" && typ != wantType {
		return 0, unprocessable("tree.type %q does not match mode %s", typ, mode)
	}
	n, err := strconv.ParseUint(mode, 8, 32)
	if err != nil {
		return 0, unprocessable("tree.mode %q is invalid", mode)
	}
	return filemode.FileMode(n), nil
}

// parseNullableSHA returns the SHA and whether one was given (null or absent = none).
func parseNullableSHA(raw json.RawMessage) (plumbing.Hash, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return plumbing.ZeroHash, false, nil
	}
	var sha string
	if err := json.Unmarshal(raw, &sha); err != nil || !fullSHA.MatchString(sha) {
		return plumbing.ZeroHash, false, unprocessable("tree.sha %s is not a valid SHA", string(raw))
	}
	return plumbing.NewHash(sha), true, nil
}

func checkEntryObject(rp *repo, mode filemode.FileMode, h plumbing.Hash) error {
	if mode == filemode.Submodule {
		return nil
	}
	want := plumbing.BlobObject
	if mode == filemode.Dir {
		want = plumbing.TreeObject
	}
	if typ, ok := rp.objectType(h); !ok || typ != want {
		return unprocessable("tree.sha %s is not a valid %s", h, want)
	}
	return nil
}

// isNoObject reports whether err means a missing object or path.
func isNoObject(err error) bool { return errors.Is(err, errNoObject) }
