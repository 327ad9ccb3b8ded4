package reconcile

import (
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// renderedElsewhere is the annotation of a rendering error in the pull request's own file when
// the preview shows counts and names only: the message of a template that failed may hold
// values of other repositories (platform configs, workload values).
const renderedElsewhere = "an assignment using this could not be rendered; the message may hold values of other repositories and is shown in a full preview"

// restrictedAnnotations are the annotations a preview that shows counts and names only may
// make: an error found while reading the pull request's own files, at its file and line,
// unless its message names a file of another source; a rendering error in its own files, at
// its position without the message. Errors anywhere else are only counted.
func restrictedAnnotations(c Commit, pr PullRequest, p *Preview) []*github.CheckRunAnnotation {
	loaded := map[*scheduling.Error]bool{}
	if p.Proposed.Snapshot != nil {
		for _, e := range p.Proposed.Snapshot.Errors {
			loaded[e] = true
		}
	}
	foreign := foreignPrefixes(pr, p)
	var out []*github.CheckRunAnnotation
	for _, e := range p.Proposed.Errors {
		path, own := ownPath(c, e.Pos.File)
		if !own || path == "" {
			continue
		}
		msg := e.Msg
		if e.Object != "" {
			msg = e.Object + ": " + msg
		}
		switch {
		case !loaded[e]:
			msg = renderedElsewhere
		case anyOf(foreign, func(prefix string) bool { return strings.Contains(msg, prefix) }):
			continue
		}
		line := max(e.Pos.Line, 1)
		out = append(out, &github.CheckRunAnnotation{Path: github.String(path), StartLine: github.Int(line),
			EndLine: github.Int(line), AnnotationLevel: github.String("failure"), Message: github.String(msg)})
	}
	return out
}

// foreignPrefixes are the position prefixes of the sources of a preview other than the pull
// request's repository: the registered workload branches of other repositories, and the
// control plane's for a pull request on a workload repository.
func foreignPrefixes(pr PullRequest, p *Preview) []string {
	var out []string
	snap := p.Proposed.Snapshot
	if snap == nil {
		return nil
	}
	for _, reg := range snap.Registrations {
		repo, err := envref.RepoOf(reg.Spec.Workload.Repo)
		if err == nil && repo != pr.Repo {
			out = append(out, WorkloadPrefix(repo, reg.Spec.Workload.Branch))
		}
	}
	if p.As == AsWorkload {
		out = append(out, gitsource.MainBranch+"@", gitsource.MainBranch+":")
		if len(snap.Sources) > 0 {
			out = append(out, snap.Sources[0].Name+":")
		}
	}
	return out
}
