package render

import (
	"sort"
	"strings"
)

// HeldBack lists, of the assignment folders ("<clusterType>/<target>", relative to the
// GitOps path) a GitOps branch holds, those the result keeps as they are without rendering
// them: their assignment failed, their cluster type is broken, or the environment's objects
// could not all be read. Their last good output stays in the branch, so the clusters keep
// running it. Sorted; nil when the result writes nothing.
func (r *Result) HeldBack(folders []string) []string {
	if !r.HasTarget {
		return nil
	}
	managed := r.managedFolders(nil, "")
	brokenCT := r.brokenClusterTypes()
	var out []string
	for _, f := range folders {
		ct, target, ok := strings.Cut(f, "/")
		if ok && managed[ct] && !strings.Contains(target, "/") && r.keepsFolder(ct, target, brokenCT) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}
