package render

import (
	"strings"
	"weak"
)

// Delta returns the part of the GitOps trees prev = from.Apply(Tree{}) and next = r.Apply(prev)
// that may differ, when r was computed from from (see Lineage): every file outside assignment
// folders, and the folders of the assignments r.Since names. Elsewhere prev and next are the
// same, so Diff of the parts is Diff of the whole trees, at the cost of the change. ok is false
// when r was not computed from from.
func (r *Result) Delta(from *Result) (prev, next Tree, ok bool) {
	if from == nil || r.Since.From != weak.Make(from) || !r.HasTarget || !from.HasTarget {
		return nil, nil, false
	}
	prev = from.only(r.Since.Keys).Apply(Tree{})
	return prev, r.only(r.Since.Keys).Apply(prev), true
}

// only is a shallow copy of r whose outputs are those of the assignments keys name.
func (r *Result) only(keys []string) *Result {
	out := *r
	out.Outputs = r.Outputs.Only(keys)
	return &out
}

// Folders counts what r.Apply(Tree{}) holds below the GitOps path: the assignment folders
// (those with a file) and the cluster-type folders (top-level folders other than dot-folders).
func (r *Result) Folders() (assignments, clusterTypes int) {
	if !r.HasTarget {
		return 0, 0
	}
	cts := map[string]bool{}
	for _, ct := range r.Snapshot.ClusterTypes {
		if !strings.HasPrefix(ct.Name, ".") {
			cts[ct.Name] = true
		}
	}
	for key, files := range r.Outputs.All() {
		if files.Len() == 0 {
			continue
		}
		assignments++
		if ct, _, ok := strings.Cut(key, "/"); ok && !strings.HasPrefix(ct, ".") {
			cts[ct] = true
		}
	}
	return assignments, len(cts)
}
