package render

import (
	"slices"
	"strings"
)

// Desired is the GitOps tree an environment's result makes of a previous tree (see Apply),
// without a flat map of its paths: the files kept from the previous tree, and the outputs of
// the result as they are, per assignment. Paths are made only when the tree is walked.
type Desired struct {
	kept     Tree   // files of the previous tree that stay and are not generated
	managed  bool   // false when the environment has no usable GitOpsRepo: the tree is kept
	prefix   string // the GitOps path followed by a slash, or ""
	readmes  []string
	isReadme map[string]bool // the cluster types of readmes
	outputs  Outputs         // assignment key → its files
	promoted []byte          // the promoted commit, nil for none
	files    int
}

// Desired returns the tree that should replace prev (see Apply).
func (r *Result) Desired(prev Tree) *Desired {
	if !r.HasTarget {
		return &Desired{kept: prev, files: len(prev)}
	}
	d := &Desired{managed: true, prefix: dirPrefix(r.Root), outputs: r.Outputs, isReadme: map[string]bool{}}
	if br := r.Snapshot.BaseRepo; br != nil && br.Spec.Commit != "" {
		d.promoted = []byte(br.Spec.Commit)
	}
	for _, ct := range r.Snapshot.ClusterTypes {
		if !d.isReadme[ct.Name] {
			d.isReadme[ct.Name] = true
			d.readmes = append(d.readmes, ct.Name)
		}
	}
	keep := r.keeper(r.managedFolders(prev, d.prefix))
	d.kept = make(Tree)
	for p, c := range prev {
		rel, inside := strings.CutPrefix(p, d.prefix)
		if inside && !keep(rel) {
			continue
		}
		if _, generated := d.generated(p); !generated {
			d.kept[p] = c
		}
	}
	d.files = len(d.kept) + len(d.readmes)
	for _, files := range d.outputs.All() {
		d.files += files.Len()
	}
	if d.promoted != nil {
		d.files++
	}
	return d
}

// Len is the number of files in the tree.
func (d *Desired) Len() int { return d.files }

// Get returns the content of the file at path, if the tree has one.
func (d *Desired) Get(path string) ([]byte, bool) {
	if c, ok := d.generated(path); ok {
		return c, true
	}
	c, ok := d.kept[path]
	return c, ok
}

// Has tells whether the tree has a file at path, without making its content.
func (d *Desired) Has(path string) bool {
	if rel, inside := strings.CutPrefix(path, d.prefix); inside && d.managed {
		if i := strings.LastIndexByte(rel, '/'); i >= 0 && d.outputs.of(rel[:i]).skeleton(rel[i+1:]) != nil {
			return true
		}
	}
	_, ok := d.Get(path)
	return ok
}

// generated returns the content of path when the result makes it.
func (d *Desired) generated(path string) ([]byte, bool) {
	rel, inside := strings.CutPrefix(path, d.prefix)
	if !inside || !d.managed {
		return nil, false
	}
	if rel == PromotedCommitPath {
		return d.promoted, d.promoted != nil
	}
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return nil, false
	}
	folder, name := rel[:i], rel[i+1:]
	if name == "README.md" && d.isReadme[folder] {
		return []byte(ReadmeText), true
	}
	c := d.outputs.of(folder).File(name)
	return c, c != nil
}

// Walk calls fn for every file: the kept ones in path order, then the cluster types' READMEs,
// the assignments' files by assignment and name, and the promoted commit. It stops at the
// first error fn returns.
func (d *Desired) Walk(fn func(path string, content []byte) error) error {
	for _, p := range d.kept.SortedPaths() {
		if err := fn(p, d.kept[p]); err != nil {
			return err
		}
	}
	readme := []byte(ReadmeText)
	for _, ct := range d.readmes {
		if err := fn(d.prefix+ct+"/README.md", readme); err != nil {
			return err
		}
	}
	for _, key := range slices.Sorted(d.outputs.Keys()) {
		err := d.outputs.of(key).Each(func(name string, content []byte) error {
			return fn(d.prefix+key+"/"+name, content)
		})
		if err != nil {
			return err
		}
	}
	if d.promoted != nil {
		return fn(d.prefix+PromotedCommitPath, d.promoted)
	}
	return nil
}

// Tree returns the tree as a flat map of paths.
func (d *Desired) Tree() Tree {
	out := make(Tree, d.files)
	for p, c := range d.kept {
		out[p] = c
	}
	for _, ct := range d.readmes {
		out[d.prefix+ct+"/README.md"] = []byte(ReadmeText)
	}
	for key, files := range d.outputs.All() {
		_ = files.Each(func(name string, content []byte) error {
			out[d.prefix+key+"/"+name] = content
			return nil
		})
	}
	if d.promoted != nil {
		out[d.prefix+PromotedCommitPath] = d.promoted
	}
	return out
}
