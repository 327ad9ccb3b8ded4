package githubsim

import (
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// base64Lines encodes like GitHub: base64 with a newline every 60 characters.
func base64Lines(data []byte) string {
	enc := base64.StdEncoding.EncodeToString(data)
	var b strings.Builder
	for len(enc) > 60 {
		b.WriteString(enc[:60])
		b.WriteByte('\n')
		enc = enc[60:]
	}
	b.WriteString(enc)
	b.WriteByte('\n')
	return b.String()
}

func (s *Server) getBlob(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	sha := c.params["file_sha"]
	if !fullSHA.MatchString(sha) {
		return 0, nil, notFound()
	}
	data, err := rp.blobData(plumbing.NewHash(sha))
	if err != nil {
		return 0, nil, notFound()
	}
	if wantsRaw(c) {
		return http.StatusOK, rawBody{data: data, contentType: "application/vnd.github.raw"}, nil
	}
	return http.StatusOK, map[string]any{
		"sha": sha, "node_id": nodeID("Blob", rp.id) + sha[:8], "size": len(data),
		"url": s.gitURL(rp, "blobs", sha), "content": base64Lines(data), "encoding": "base64",
	}, nil
}

func (s *Server) createBlob(c *call) (int, any, error) {
	var in struct {
		Content  *string `json:"content"`
		Encoding string  `json:"encoding"`
	}
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	if in.Content == nil {
		return 0, nil, validation("Blob", "content", "content is missing")
	}
	data := []byte(*in.Content)
	switch in.Encoding {
	case "", "utf-8", "utf8":
	case "base64":
		dec, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(*in.Content, "\n", ""))
		if err != nil {
			return 0, nil, validation("Blob", "content", "content is not valid Base64")
		}
		data = dec
	default:
		return 0, nil, validation("Blob", "encoding", "encoding %q is not supported", in.Encoding)
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	h, err := rp.writeBlob(data)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"sha": h.String(), "url": s.gitURL(rp, "blobs", h.String())}, nil
}

// gitCommitMap is the git-commit response of the Git Data API.
func (s *Server) gitCommitMap(rp *repo, c *object.Commit) map[string]any {
	sha := c.Hash.String()
	parents := []map[string]any{}
	for _, p := range c.ParentHashes {
		parents = append(parents, map[string]any{
			"sha": p.String(), "url": s.gitURL(rp, "commits", p.String()),
			"html_url": s.htmlCommitURL(rp, p.String()),
		})
	}
	return map[string]any{
		"sha": sha, "node_id": nodeID("Commit", rp.id) + sha[:8],
		"url": s.gitURL(rp, "commits", sha), "html_url": s.htmlCommitURL(rp, sha),
		"author": signatureMap(c.Author), "committer": signatureMap(c.Committer),
		"tree":    map[string]any{"sha": c.TreeHash.String(), "url": s.gitURL(rp, "trees", c.TreeHash.String())},
		"message": c.Message, "parents": parents, "verification": unsignedVerification(),
	}
}

func unsignedVerification() map[string]any {
	return map[string]any{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil, "verified_at": nil}
}

func signatureMap(sig object.Signature) map[string]any {
	return map[string]any{"name": sig.Name, "email": sig.Email, "date": sig.When.UTC().Format(time.RFC3339)}
}

func (s *Server) htmlCommitURL(rp *repo, sha string) string {
	return s.base() + "/" + rp.fullName() + "/commit/" + sha
}

func (s *Server) getGitCommit(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	sha := c.params["commit_sha"]
	if !fullSHA.MatchString(sha) {
		return 0, nil, notFound()
	}
	cm, err := rp.commitObj(plumbing.NewHash(sha))
	if err != nil {
		return 0, nil, notFound()
	}
	return http.StatusOK, s.gitCommitMap(rp, cm), nil
}

type gitUserInput struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Date  string `json:"date"`
}

func (s *Server) createGitCommit(c *call) (int, any, error) {
	var in struct {
		Message   *string       `json:"message"`
		Tree      string        `json:"tree"`
		Parents   []string      `json:"parents"`
		Author    *gitUserInput `json:"author"`
		Committer *gitUserInput `json:"committer"`
	}
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	if in.Message == nil || in.Tree == "" {
		return 0, nil, validation("Commit", "", "message and tree are required")
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	cm, err := s.newCommit(rp, c.actor, *in.Message, in.Tree, in.Parents, in.Author, in.Committer)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, s.gitCommitMap(rp, cm), nil
}

func (s *Server) newCommit(rp *repo, actor, msg, tree string, parents []string, author, committer *gitUserInput) (*object.Commit, error) {
	if typ, ok := rp.objectType(plumbing.NewHash(tree)); !fullSHA.MatchString(tree) || !ok || typ != plumbing.TreeObject {
		return nil, unprocessable("Tree SHA does not exist")
	}
	cm := &object.Commit{Message: msg, TreeHash: plumbing.NewHash(tree)}
	for _, p := range parents {
		if typ, ok := rp.objectType(plumbing.NewHash(p)); !fullSHA.MatchString(p) || !ok || typ != plumbing.CommitObject {
			return nil, unprocessable("Parent SHA does not exist or is not a commit object")
		}
		cm.ParentHashes = append(cm.ParentHashes, plumbing.NewHash(p))
	}
	name, email := s.gitIdentity(actor)
	cm.Author = s.signature(author, name, email)
	cm.Committer = s.signature(committer, cm.Author.Name, cm.Author.Email)
	if committer == nil {
		cm.Committer.When = cm.Author.When
	}
	h, err := rp.writeCommit(cm)
	if err != nil {
		return nil, err
	}
	return rp.commitObj(h)
}

func (s *Server) signature(in *gitUserInput, name, email string) object.Signature {
	sig := object.Signature{Name: name, Email: email, When: s.now()}
	if in == nil {
		return sig
	}
	if in.Name != "" {
		sig.Name = in.Name
	}
	if in.Email != "" {
		sig.Email = in.Email
	}
	if t, err := time.Parse(time.RFC3339, in.Date); err == nil {
		sig.When = t
	}
	return sig
}
