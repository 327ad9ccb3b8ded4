package gitops

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Proposal is the GitOps tree a result makes of a base tree, written as git objects, and what
// differs from the base.
type Proposal struct {
	Tree plumbing.Hash // the root tree
	// Plan is the changes (see Changes) as render.GroupChanges groups them below the GitOps
	// path. Its groups are shared with later proposals: they must not be modified.
	Plan *render.Plan
	// changes and presence are what this proposal found; reused and reusedPresence are those
	// of cluster types' folders made before over the same base folder, kept with their memo.
	changes        []render.Change
	reused         [][]render.Change
	presence       map[string]Presence
	reusedPresence map[string]map[string]Presence // cluster type → its folders
	base           plumbing.Hash
	root           string
}

// Changes lists the files added, changed and removed, with paths from the repository's root,
// in no particular order.
func (p *Proposal) Changes() []render.Change {
	out := slices.Clone(p.changes)
	for _, c := range p.reused {
		out = append(out, c...)
	}
	return out
}

// Presence tells, for an assignment folder ("<clusterType>/<target>" below the GitOps path)
// with a change, whether the base has it and whether the tree has it; the zero value for a
// folder without a change.
func (p *Proposal) Presence(key string) Presence {
	if v, ok := p.presence[key]; ok {
		return v
	}
	ct, _, _ := strings.Cut(key, "/")
	return p.reusedPresence[ct][key]
}

// Assignments is Presence for every assignment folder with a change.
func (p *Proposal) Assignments() map[string]Presence {
	out := maps.Clone(p.presence)
	for _, m := range p.reusedPresence {
		maps.Copy(out, m)
	}
	return out
}

// Presence says whether an assignment folder is in the base and in the proposed tree.
type Presence struct{ Before, After bool }

// Propose writes into s the GitOps tree that res makes of the tree base (zero for none), as
// render.Result.Apply defines it, and compares it with base. idx must describe res (see
// Index.Advance). Trees are compared by hash and only the folders whose content differs are
// read, written and compared file by file: a cluster type whose assignments did not change
// since its folder was last made, over the same base folder, costs a lookup. res must have a
// GitOps target (HasTarget).
func Propose(s storer.EncodedObjectStorer, base plumbing.Hash, res *render.Result, idx *Index) (*Proposal, error) {
	if !idx.Describes(res) {
		return nil, fmt.Errorf("propose: the index does not describe the result")
	}
	p := &proposer{s: s, res: res, idx: idx, readme: newObject(plumbing.BlobObject, []byte(render.ReadmeText)),
		cts: map[string]bool{}, broken: map[string]bool{}, incomplete: res.Snapshot.Incomplete,
		out: &Proposal{presence: map[string]Presence{}, reusedPresence: map[string]map[string]Presence{}, base: base, root: res.Root}}
	for _, ct := range res.Snapshot.ClusterTypes {
		p.cts[ct.Name] = true
	}
	for _, b := range res.Snapshot.Broken {
		if b.Kind == scheduling.KindClusterType {
			p.broken[b.Name] = true
		}
	}
	if br := res.Snapshot.BaseRepo; br != nil && br.Spec.Commit != "" {
		p.promoted = newObject(plumbing.BlobObject, []byte(br.Spec.Commit))
	}
	var segs []string
	if res.Root != "" {
		segs = strings.Split(res.Root, "/")
	}
	tree, err := p.along(base, segs, "")
	if err != nil {
		return nil, err
	}
	if tree.IsZero() { // the root of a repository is a tree, even empty
		empty := newObject(plumbing.TreeObject, nil)
		if err := store(s, empty); err != nil {
			return nil, fmt.Errorf("write tree: %w", err)
		}
		tree = empty.h
	}
	p.out.Tree = tree
	p.out.Plan = p.plan()
	return p.out, nil
}

// proposer writes the proposed tree of one result.
type proposer struct {
	s          storer.EncodedObjectStorer
	res        *render.Result
	idx        *Index
	readme     *ownObject
	promoted   *ownObject      // nil when no commit is promoted
	cts        map[string]bool // the snapshot's cluster types
	broken     map[string]bool // cluster types whose definitions are broken
	incomplete bool
	out        *Proposal
	// assignments are the assignment folders recorded in out since the cluster type being
	// made started.
	assignments []string
	inCT        bool            // a cluster type's folder is being made
	other       []render.Change // the changes outside cluster types' folders
	blocks      []ctGroups      // the changes of each cluster type's folder, grouped
}

// along rewrites the folders on the way to the GitOps path: tree is the folder at dir, segs the
// rest of the way.
func (p *proposer) along(tree plumbing.Hash, segs []string, dir string) (plumbing.Hash, error) {
	if len(segs) == 0 {
		return p.gitopsDir(tree, dir)
	}
	entries, err := p.read(tree, dir)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	out := make([]object.TreeEntry, 0, len(entries)+1)
	var child plumbing.Hash
	for _, e := range entries {
		if e.Name != segs[0] {
			out = append(out, e)
			continue
		}
		if e.Mode == filemode.Dir {
			child = e.Hash
		} else if err := p.removed(e, join(dir, e.Name)); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	h, err := p.along(child, segs[1:], join(dir, segs[0]))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !h.IsZero() {
		out = append(out, object.TreeEntry{Name: segs[0], Mode: filemode.Dir, Hash: h})
	}
	return p.write(out, tree, dir)
}

// gitopsDir makes the folder at the GitOps path: the folder of every cluster type, the
// promoted commit, and the rest of the base as it is, apart from the folders of former
// cluster types (recognised by their README), which go unless the snapshot is incomplete.
func (p *proposer) gitopsDir(tree plumbing.Hash, dir string) (plumbing.Hash, error) {
	entries, err := p.read(tree, dir)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	out := make([]object.TreeEntry, 0, len(entries)+len(p.cts)+1)
	seen := map[string]bool{}
	for _, e := range entries {
		name, full := e.Name, join(dir, e.Name)
		switch {
		case p.cts[name] || (name == ".github" && p.promoted != nil):
			seen[name] = true
			old := plumbing.ZeroHash
			if e.Mode == filemode.Dir {
				old = e.Hash
			} else if err := p.removed(e, full); err != nil {
				return plumbing.ZeroHash, err
			}
			h, err := p.generatedDir(name, old, full)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			out = append(out, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		case e.Mode != filemode.Dir || strings.HasPrefix(name, ".") || p.broken[name] || p.incomplete:
			out = append(out, e)
		default:
			retired, err := p.retired(e.Hash, full)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if !retired {
				out = append(out, e)
			} else if err := p.removed(e, full); err != nil {
				return plumbing.ZeroHash, err
			}
		}
	}
	for _, ct := range p.res.Snapshot.ClusterTypes {
		if !seen[ct.Name] {
			seen[ct.Name] = true
			h, err := p.clusterType(ct.Name, plumbing.ZeroHash, join(dir, ct.Name))
			if err != nil {
				return plumbing.ZeroHash, err
			}
			out = append(out, object.TreeEntry{Name: ct.Name, Mode: filemode.Dir, Hash: h})
		}
	}
	if p.promoted != nil && !seen[".github"] {
		h, err := p.generatedDir(".github", plumbing.ZeroHash, join(dir, ".github"))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		out = append(out, object.TreeEntry{Name: ".github", Mode: filemode.Dir, Hash: h})
	}
	return p.write(out, tree, dir)
}

// generatedDir makes a folder the result writes into: a cluster type's, or .github with the
// promoted commit.
func (p *proposer) generatedDir(name string, old plumbing.Hash, full string) (plumbing.Hash, error) {
	if p.cts[name] {
		return p.clusterType(name, old, full)
	}
	return p.setFile(old, strings.Split(render.PromotedCommitPath, "/")[1:], p.promoted, full)
}

// retired reports whether a folder is a former cluster type's: its README.md is Kalypso's.
func (p *proposer) retired(tree plumbing.Hash, dir string) (bool, error) {
	entries, err := p.read(tree, dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if e.Name == "README.md" {
			return e.Mode.IsFile() && e.Hash == p.readme.h, nil
		}
	}
	return false, nil
}

// clusterType makes a cluster type's folder: its README, the folder of every assignment it
// renders, and of the base's content what stays — the folders of failing assignments, and
// everything when the cluster type is broken or the snapshot incomplete. A cluster type whose
// part of the index was made into a folder before, over the same base folder, costs a lookup:
// the memo gives its tree and its changes.
func (p *proposer) clusterType(ct string, base plumbing.Hash, dir string) (plumbing.Hash, error) {
	c := p.idx.cts[ct]
	if c == nil {
		c = newCTIndex()
	}
	key := ctMemoKey{base: base, dir: dir, broken: p.broken[ct], incomplete: p.incomplete}
	c.mu.Lock()
	m := c.memo
	c.mu.Unlock()
	if m != nil && m.key == key && (m.tree == base || p.s.HasEncodedObject(m.tree) == nil) {
		p.out.reused = append(p.out.reused, m.changes)
		p.out.reusedPresence[ct] = m.assignments
		p.blocks = append(p.blocks, ctGroups{ct, m.groups})
		return m.tree, nil
	}
	entries, err := p.read(base, dir)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	keepAll := key.broken || key.incomplete
	out := make([]object.TreeEntry, 0, len(c.folders)+len(entries)+1)
	out = append(out, object.TreeEntry{Name: "README.md", Mode: filemode.Regular, Hash: p.readme.h})
	for _, e := range entries {
		_, generated := c.folders[e.Name]
		if e.Name != "README.md" && !generated && (keepAll || (e.Mode == filemode.Dir && c.failed[e.Name])) {
			out = append(out, e)
		}
	}
	for target, h := range c.folders {
		out = append(out, object.TreeEntry{Name: target, Mode: filemode.Dir, Hash: h})
	}
	sortEntries(out)
	obj := newObject(plumbing.TreeObject, encodeTree(out))
	m = &ctMemo{key: key, tree: obj.h}
	if obj.h != base {
		before := len(p.out.changes)
		p.assignments = p.assignments[:0]
		p.inCT = true
		err := p.compare(ct, entries, out, c, dir)
		p.inCT = false
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if err := store(p.s, obj); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("write tree %s: %w", dir, err)
		}
		m.changes = slices.Clone(p.out.changes[before:])
		m.groups = render.GroupChanges(m.changes, p.res.Root).Groups
		p.blocks = append(p.blocks, ctGroups{ct, m.groups})
		m.assignments = make(map[string]Presence, len(p.assignments))
		for _, k := range p.assignments {
			m.assignments[k] = p.out.presence[k]
		}
	}
	c.mu.Lock()
	c.memo = m
	c.mu.Unlock()
	return obj.h, nil
}

// compare writes what a cluster type's folder has that its base folder lacks, and records the
// changes: before and after are the entries of both folders, each in git's order.
func (p *proposer) compare(ct string, before, after []object.TreeEntry, c *ctIndex, dir string) error {
	old := make(map[string]object.TreeEntry, len(before))
	for _, e := range before {
		old[e.Name] = e
	}
	for _, e := range after {
		b, had := old[e.Name]
		delete(old, e.Name)
		if had && b.Hash == e.Hash && b.Mode == e.Mode {
			continue
		}
		full := join(dir, e.Name)
		if e.Name == "README.md" {
			if err := p.file(b, had, p.readme, full); err != nil {
				return err
			}
			continue
		}
		if err := p.folder(ct, e.Name, b, had, c, full); err != nil {
			return err
		}
	}
	for _, b := range old {
		if err := p.removed(b, join(dir, b.Name)); err != nil {
			return err
		}
	}
	return nil
}

// folder writes an assignment's rendered folder and records how it differs from the base
// entry b of the same name (had is false when there is none).
func (p *proposer) folder(ct, target string, b object.TreeEntry, had bool, c *ctIndex, full string) error {
	key := ct + "/" + target
	files, _ := p.res.Outputs.Get(key)
	names, blobs, tree := folderObjects(files)
	if tree.h != c.folders[target] {
		return fmt.Errorf("propose %s: the index does not match the rendered folder", full)
	}
	p.presence(key, Presence{Before: had && b.Mode == filemode.Dir, After: true})
	var old []object.TreeEntry
	if had && b.Mode == filemode.Dir {
		var err error
		if old, err = p.read(b.Hash, full); err != nil {
			return err
		}
	} else if had {
		if err := p.removed(b, full); err != nil {
			return err
		}
	}
	byName := make(map[string]object.TreeEntry, len(old))
	for _, e := range old {
		byName[e.Name] = e
	}
	for i, name := range names {
		e, ok := byName[name]
		delete(byName, name)
		if err := p.file(e, ok, blobs[i], full+"/"+name); err != nil {
			return err
		}
	}
	for _, e := range byName {
		if err := p.removed(e, full+"/"+e.Name); err != nil {
			return err
		}
	}
	if err := store(p.s, tree); err != nil {
		return fmt.Errorf("write tree %s: %w", full, err)
	}
	return nil
}

// file writes a regular file where the base has entry b (had is false when it has none) and
// records the change, if any.
func (p *proposer) file(b object.TreeEntry, had bool, blob *ownObject, full string) error {
	switch {
	case had && b.Mode == filemode.Regular && b.Hash == blob.h:
		return nil
	case had && b.Mode.IsFile():
		p.change(full, render.Changed)
	case had:
		if err := p.removed(b, full); err != nil {
			return err
		}
		p.change(full, render.Added)
	default:
		p.change(full, render.Added)
	}
	if err := store(p.s, blob); err != nil {
		return fmt.Errorf("write %s: %w", full, err)
	}
	return nil
}

// setFile writes blob at the path segs below the folder tree (zero when it does not exist).
func (p *proposer) setFile(tree plumbing.Hash, segs []string, blob *ownObject, dir string) (plumbing.Hash, error) {
	entries, err := p.read(tree, dir)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	name, full := segs[0], join(dir, segs[0])
	out := make([]object.TreeEntry, 0, len(entries)+1)
	var b object.TreeEntry
	had := false
	for _, e := range entries {
		if e.Name == name {
			b, had = e, true
		} else {
			out = append(out, e)
		}
	}
	if len(segs) == 1 {
		if had && b.Mode.IsFile() && b.Hash == blob.h {
			out = append(out, b) // the same content: left as it is
		} else if err := p.file(b, had, blob, full); err != nil {
			return plumbing.ZeroHash, err
		} else {
			out = append(out, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: blob.h})
		}
		return p.write(out, tree, dir)
	}
	child := plumbing.ZeroHash
	if had && b.Mode == filemode.Dir {
		child = b.Hash
	} else if had {
		if err := p.removed(b, full); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	h, err := p.setFile(child, segs[1:], blob, full)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	out = append(out, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	return p.write(out, tree, dir)
}

// removed records the removal of a base entry: a file, or every file below a folder (and the
// assignment a folder is, when it is one).
func (p *proposer) removed(e object.TreeEntry, full string) error {
	switch {
	case e.Mode.IsFile():
		p.change(full, render.Removed)
	case e.Mode == filemode.Dir:
		if key, ok := p.assignmentKey(full); ok {
			if _, known := p.out.presence[key]; !known {
				p.presence(key, Presence{Before: true})
			}
		}
		entries, err := p.read(e.Hash, full)
		if err != nil {
			return err
		}
		for _, c := range entries {
			if err := p.removed(c, full+"/"+c.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// assignmentKey returns "<clusterType>/<target>" when full is the path of an assignment
// folder: two levels below the GitOps path, not in a dot-folder.
func (p *proposer) assignmentKey(full string) (string, bool) {
	rel := full
	if p.res.Root != "" {
		var inside bool
		if rel, inside = strings.CutPrefix(full, p.res.Root+"/"); !inside {
			return "", false
		}
	}
	ct, target, ok := strings.Cut(rel, "/")
	if !ok || strings.HasPrefix(ct, ".") || strings.Contains(target, "/") {
		return "", false
	}
	return rel, true
}

// presence records whether an assignment folder is in the base and in the tree.
func (p *proposer) presence(key string, v Presence) {
	p.out.presence[key] = v
	p.assignments = append(p.assignments, key)
}

func (p *proposer) change(full string, kind render.ChangeKind) {
	c := render.Change{Path: full, Kind: kind}
	p.out.changes = append(p.out.changes, c)
	if !p.inCT {
		p.other = append(p.other, c)
	}
}

// read returns the entries of a tree in git's order; none for the zero hash.
func (p *proposer) read(tree plumbing.Hash, dir string) ([]object.TreeEntry, error) {
	if tree.IsZero() {
		return nil, nil
	}
	t, err := object.GetTree(p.s, tree)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", displayDir(dir), err)
	}
	return t.Entries, nil
}

// write writes a folder with these entries (in any order) unless it is base, and returns its
// hash: zero for an empty folder other than the root, which disappears.
func (p *proposer) write(entries []object.TreeEntry, base plumbing.Hash, dir string) (plumbing.Hash, error) {
	if len(entries) == 0 && dir != "" {
		return plumbing.ZeroHash, nil
	}
	sortEntries(entries)
	obj := newObject(plumbing.TreeObject, encodeTree(entries))
	if obj.h == base {
		return base, nil
	}
	if err := store(p.s, obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write tree %s: %w", displayDir(dir), err)
	}
	return obj.h, nil
}

func join(dir, name string) string { return path.Join(dir, name) }

func displayDir(dir string) string {
	if dir == "" {
		return "/"
	}
	return dir
}
