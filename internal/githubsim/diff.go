package githubsim

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// fileDiff is one changed file between two trees.
type fileDiff struct {
	status    string
	path      string
	previous  string
	sha       string
	additions int
	deletions int
	patch     string
	binary    bool
}

// diffTrees compares two trees (zero = empty) like GitHub's files lists. Small diffs are kept
// by pair of trees; of the large ones, only the newest from each tree, from which the next is
// derived (derivedDiff).
func (rp *repo) diffTrees(a, b plumbing.Hash) ([]fileDiff, error) {
	key := [2]plumbing.Hash{a, b}
	if d, ok := rp.diffs.get(key); ok {
		return d, nil
	}
	if last, ok := rp.lastDiffs.get(a); ok && last.to == b {
		return last.files, nil
	}
	d, derived, err := rp.derivedDiff(a, b)
	if err != nil {
		return nil, err
	}
	if !derived {
		if d, err = rp.computeDiff(a, b); err != nil {
			return nil, err
		}
	}
	rp.remember(a, b, d)
	return d, nil
}

// remember keeps a computed diff.
func (rp *repo) remember(a, b plumbing.Hash, d []fileDiff) {
	if len(d) > renameLimit {
		rp.lastDiffs.put(a, lastDiff{to: b, files: d})
		return
	}
	rp.diffs.put([2]plumbing.Hash{a, b}, d)
}

// What the simulator keeps of the diffs it computed, per repository: enough for the pull
// requests and pushes a test has in flight, bounded whatever their number.
const (
	keptDiffs     = 1024    // small diffs, by pair of trees
	keptLastDiffs = 8       // large diffs, the newest from each tree
	keptPatches   = 1 << 16 // file patches, by pair of blobs
)

// initDiffCaches makes the repository's empty diff caches.
func (rp *repo) initDiffCaches() {
	rp.diffs = newCapped[[2]plumbing.Hash, []fileDiff](keptDiffs)
	rp.lastDiffs = newCapped[plumbing.Hash, lastDiff](keptLastDiffs)
	rp.patches = newCapped[[2]plumbing.Hash, fileDiff](keptPatches)
}

// renameLimit is how many added and removed files a diff may have for renames to be detected;
// GitHub also gives up on rename detection for large diffs.
const renameLimit = 400

func (rp *repo) computeDiff(a, b plumbing.Hash) ([]fileDiff, error) {
	ta, err := rp.optTree(a)
	if err != nil {
		return nil, err
	}
	tb, err := rp.optTree(b)
	if err != nil {
		return nil, err
	}
	changes, err := object.DiffTreeWithOptions(context.Background(), ta, tb, &object.DiffTreeOptions{})
	if err != nil {
		return nil, fmt.Errorf("diff trees: %w", err)
	}
	if len(changes) <= renameLimit {
		if changes, err = object.DetectRenames(changes, object.DefaultDiffTreeOptions); err != nil {
			return nil, fmt.Errorf("detect renames: %w", err)
		}
	}
	out := make([]fileDiff, 0, len(changes))
	for _, ch := range changes {
		d, err := rp.fileDiff(ch)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// fileDiff describes one changed file; the patch of a pair of blobs is computed once.
func (rp *repo) fileDiff(ch *object.Change) (fileDiff, error) {
	key := [2]plumbing.Hash{ch.From.TreeEntry.Hash, ch.To.TreeEntry.Hash}
	d, ok := rp.patches.get(key)
	if !ok {
		patch, err := ch.Patch()
		if err != nil {
			return fileDiff{}, fmt.Errorf("diff patch: %w", err)
		}
		fps := patch.FilePatches()
		if len(fps) != 1 {
			return fileDiff{}, fmt.Errorf("diff patch of %s: %d file patches", ch.To.Name, len(fps))
		}
		d = describeFilePatch(fps[0])
		rp.patches.put(key, d)
	}
	d.status, d.path, d.previous = "modified", ch.To.Name, ""
	switch {
	case ch.From.Name == "":
		d.status, d.path = "added", ch.To.Name
	case ch.To.Name == "":
		d.status, d.path = "removed", ch.From.Name
	case ch.From.Name != ch.To.Name:
		d.status, d.previous = "renamed", ch.From.Name
	}
	return d, nil
}

func (rp *repo) optTree(h plumbing.Hash) (*object.Tree, error) {
	if h.IsZero() {
		return nil, nil
	}
	return rp.treeObj(h)
}

func describeFilePatch(fp fdiff.FilePatch) fileDiff {
	from, to := fp.Files()
	d := fileDiff{binary: fp.IsBinary()}
	switch {
	case from == nil:
		d.status, d.path, d.sha = "added", to.Path(), to.Hash().String()
	case to == nil:
		d.status, d.path, d.sha = "removed", from.Path(), from.Hash().String()
	case from.Path() != to.Path():
		d.status, d.path, d.previous, d.sha = "renamed", to.Path(), from.Path(), to.Hash().String()
	default:
		d.status, d.path, d.sha = "modified", to.Path(), to.Hash().String()
	}
	for _, ch := range fp.Chunks() {
		n := countLines(ch.Content())
		switch ch.Type() {
		case fdiff.Add:
			d.additions += n
		case fdiff.Delete:
			d.deletions += n
		}
	}
	if !d.binary {
		d.patch = hunksOnly(fp)
	}
	return d
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// onePatch adapts a single file patch for the unified encoder.
type onePatch struct{ fp fdiff.FilePatch }

func (p onePatch) FilePatches() []fdiff.FilePatch { return []fdiff.FilePatch{p.fp} }
func (p onePatch) Message() string                { return "" }

// hunksOnly renders a file patch from its first hunk header, as GitHub's
// "patch" field does.
func hunksOnly(fp fdiff.FilePatch) string {
	var buf bytes.Buffer
	if err := fdiff.NewUnifiedEncoder(&buf, fdiff.DefaultContextLines).Encode(onePatch{fp}); err != nil {
		return ""
	}
	text := buf.String()
	if i := strings.Index(text, "@@"); i >= 0 {
		return strings.TrimSuffix(text[i:], "\n")
	}
	return ""
}

// diffEntryMap is a diff-entry response object.
func (s *Server) diffEntryMap(rp *repo, ref string, d fileDiff) map[string]any {
	api := s.base() + "/api/v3/repos/" + rp.fullName()
	m := map[string]any{
		"sha": d.sha, "filename": d.path, "status": d.status,
		"additions": d.additions, "deletions": d.deletions, "changes": d.additions + d.deletions,
		"blob_url":     s.base() + "/" + rp.fullName() + "/blob/" + ref + "/" + pathEscape(d.path),
		"raw_url":      s.base() + "/" + rp.fullName() + "/raw/" + ref + "/" + pathEscape(d.path),
		"contents_url": api + "/contents/" + pathEscape(d.path) + "?ref=" + url.QueryEscape(ref),
	}
	if d.patch != "" {
		m["patch"] = d.patch
	}
	if d.previous != "" {
		m["previous_filename"] = d.previous
	}
	return m
}

func (s *Server) diffEntries(rp *repo, ref string, diffs []fileDiff) []map[string]any {
	out := make([]map[string]any, 0, len(diffs))
	for _, d := range diffs {
		out = append(out, s.diffEntryMap(rp, ref, d))
	}
	return out
}
