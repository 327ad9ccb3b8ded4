package gitsource

import (
	"path"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/go-git/go-git/v5"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// selectListed is what scheduling.WalkFiles selects of a source being read with o, found from
// the listing of the folder read instead of walking the folders of its FS, when that is the
// same: no .sourceignore applies (none at the source's root), the folder read is a folder
// (listed) holding at least one YAML file. It reports false when it did not select.
func selectListed(listed *listing, key sourceKey, o *treeOptions) ([]scheduling.SourceFile, bool, error) {
	if listed == nil || !key.ignore.IsZero() || (o.root != "" && o.under != o.root) || mayIgnore(listed, o) {
		return nil, false, nil
	}
	var files []scheduling.SourceFile
	listed.walk(dirPrefix(o.relativeUnder()), &files)
	if len(files) == 0 && o.relativeUnder() != "" {
		return nil, false, nil // WalkFiles reports a folder without files as missing
	}
	if err := scheduling.CheckSourceLimits(files, o.policy); err != nil {
		return nil, true, err
	}
	return files, true, nil
}

// mayIgnore tells whether a .sourceignore could apply, or a folder of that name be read: one
// at the root of the listing when it is the source's root, or one on the way to the folder read.
func mayIgnore(listed *listing, o *treeOptions) bool {
	if o.under == o.root {
		return slices.ContainsFunc(listed.dirs, func(d listedDir) bool { return d.name == ".sourceignore" }) ||
			slices.ContainsFunc(listed.files, func(f listedFile) bool { return f.name == ".sourceignore" })
	}
	return slices.Contains(strings.Split(o.under, "/"), ".sourceignore")
}

// walk appends the YAML files of l below prefix to files, in the order fs.WalkDir visits them
// (each folder's entries by name), leaving out the folders named .git in it.
func (l *listing) walk(prefix string, files *[]scheduling.SourceFile) {
	type named struct {
		name string
		file *listedFile
		dir  *listing
	}
	all := make([]named, 0, len(l.files)+len(l.dirs))
	for i := range l.files {
		all = append(all, named{name: l.files[i].name, file: &l.files[i]})
	}
	for _, d := range l.dirs {
		if d.name != ".git" {
			all = append(all, named{name: d.name, dir: d.sub})
		}
	}
	slices.SortFunc(all, func(a, b named) int { return strings.Compare(a.name, b.name) })
	for _, e := range all {
		switch {
		case e.dir != nil:
			e.dir.walk(prefix+e.name+"/", files)
		case scheduling.IsSourceFile(e.name):
			*files = append(*files, scheduling.SourceFile{Path: prefix + e.name, Size: e.file.size})
		}
	}
}

// readSelected makes the FS of a source whose files were selected before any entered it (no
// .sourceignore applies): the selected files, each read unless it is over the file size limit
// (then listed with its real size, unread).
func readSelected(repo *git.Repository, entries map[string]entry, selected []scheduling.SourceFile, o *treeOptions) (treeFS, error) {
	out := newTreeFS()
	for _, f := range selected {
		name := path.Join(o.root, f.Path)
		if scheduling.CheckFileSize(f.Size, o.policy) != nil {
			out.MapFS[name] = &fstest.MapFile{Mode: 0o644}
			out.large[name] = f.Size
			continue
		}
		if err := out.read(repo, o.cache, entries, name); err != nil {
			return treeFS{}, err
		}
	}
	out.remember(o, selected, nil)
	return out, nil
}
