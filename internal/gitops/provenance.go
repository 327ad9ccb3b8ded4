package gitops

import (
	"path"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/render"
)

// SourceTrailer is the commit-message trailer that names each source commit of a GitOps
// commit the app writes: "Kalypso-Source: <name> <commit>".
const SourceTrailer = "Kalypso-Source:"

// Provenance is what a GitOps commit deploys.
type Provenance struct {
	Main      string      // the promoted main commit (.github/tracking/Promoted_Commit_Id), "" when absent
	Sources   [][2]string // name and commit of each source, from the Kalypso-Source trailers
	Committed time.Time
}

// maxProvenanceDepth bounds the commits searched for trailers below a merge or squash.
const maxProvenanceDepth = 3

// ReadProvenance reads what commit deploys: the promoted main commit below root, and the
// source trailers of the commit or, for a merge the app's pull request became, of the
// nearest commit below it that has them.
func ReadProvenance(repo *git.Repository, commit plumbing.Hash, root string) (Provenance, error) {
	c, err := repo.CommitObject(commit)
	if err != nil {
		return Provenance{}, err
	}
	p := Provenance{Committed: c.Committer.When.UTC()}
	p.Main = strings.TrimSpace(string(ReadFile(repo, commit, path.Join(root, render.PromotedCommitPath))))
	queue := []plumbing.Hash{commit}
	for depth := 0; depth < maxProvenanceDepth && len(queue) > 0; depth++ {
		var next []plumbing.Hash
		for _, h := range queue {
			c, err := repo.CommitObject(h)
			if err != nil {
				continue
			}
			if src := sourceTrailers(c.Message); len(src) > 0 {
				p.Sources = src
				return p, nil
			}
			next = append(next, c.ParentHashes...)
		}
		queue = next
	}
	return p, nil
}

// sourceTrailers reads the Kalypso-Source trailers of a commit message.
func sourceTrailers(message string) [][2]string {
	var out [][2]string
	for _, line := range strings.Split(message, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), SourceTrailer)
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) >= 2 {
			out = append(out, [2]string{strings.Join(fields[:len(fields)-1], " "), fields[len(fields)-1]})
		}
	}
	return out
}
