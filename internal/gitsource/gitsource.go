// Package gitsource reads control-plane sources out of git repositories with go-git.
package gitsource

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"testing/fstest"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// wanted tells which files of a tree a control plane can use: YAML and .sourceignore.
func wanted(name string) bool {
	return scheduling.IsSourceFile(name) || path.Base(name) == ".sourceignore"
}

// entry is a file of a tree: its blob and size, read from the object's header.
type entry struct {
	hash plumbing.Hash
	size int64
}

// TreeFS returns the YAML files (and .sourceignore) of a commit's tree as a read-only FS.
// What it reads is what loading the tree as a source reads (scheduling.SelectFiles), decided
// from the sizes in the objects' headers before any file is read: when those files breach the
// limits (options Limits or MaxFileBytes, the defaults otherwise), none is read and the FS
// reports the breach; a file above the file size limit is left unread. Options narrow it to a
// folder; WithCache reads through a Cache, at the cost of what changed since its last reads.
func TreeFS(repo *git.Repository, commit plumbing.Hash, opts ...Option) (fs.FS, error) {
	var o treeOptions
	for _, opt := range opts {
		opt(&o)
	}
	rk := rootKeyOf(commit, &o)
	found, ok := lookup(o.cache, (*Cache).rootsPart, rk)
	if ok && found.fs != nil { // this commit was read with these options: one lookup
		o.cache.note(countReused)
		return found.fs, nil
	}
	if !ok {
		var err error
		if found, err = findSource(repo, commit, &o); err != nil {
			return nil, err
		}
	}
	out, ok := lookup(o.cache, (*Cache).sourcesPart, found.key)
	if ok {
		o.cache.note(countReused)
	} else {
		var err error
		if out, err = readSource(repo, found.key, found.under, &o); err != nil {
			return nil, fmt.Errorf("read tree of %s: %w", commit, err)
		}
		store(o.cache, (*Cache).sourcesPart, found.key, out, countRead)
	}
	found.fs = out // made an fs.FS once, not at each read
	store(o.cache, (*Cache).rootsPart, rk, found, nil)
	return found.fs, nil
}

// rootKey identifies what TreeFS reads of a commit: a commit never changes, so neither does
// the source found in it.
type rootKey struct {
	commit      plumbing.Hash
	under, root string
	limits      limits
}

// foundSource is what sourceOf found of a commit's tree, and the FS TreeFS read of it (nil:
// not yet).
type foundSource struct {
	key   sourceKey
	under *object.TreeEntry
	fs    fs.FS
}

func rootKeyOf(commit plumbing.Hash, o *treeOptions) rootKey {
	return rootKey{commit: commit, under: o.under, root: o.root, limits: limitsOf(o.policy)}
}

// sourceAt is sourceOf the tree of commit, found once per commit through the cache: the
// commit and the trees on the way to the folder read are decoded only for a commit not seen.
func sourceAt(repo *git.Repository, commit plumbing.Hash, o *treeOptions) (sourceKey, *object.TreeEntry, error) {
	rk := rootKeyOf(commit, o)
	if f, ok := lookup(o.cache, (*Cache).rootsPart, rk); ok {
		return f.key, f.under, nil
	}
	f, err := findSource(repo, commit, o)
	if err != nil {
		return sourceKey{}, nil, err
	}
	store(o.cache, (*Cache).rootsPart, rk, f, nil)
	return f.key, f.under, nil
}

// findSource is sourceOf the tree of commit, decoding the commit.
func findSource(repo *git.Repository, commit plumbing.Hash, o *treeOptions) (foundSource, error) {
	c, err := repo.CommitObject(commit)
	if err != nil {
		return foundSource{}, fmt.Errorf("read commit %s: %w", commit, err)
	}
	key, under, err := sourceOf(repo, c.TreeHash, o)
	if err != nil {
		return foundSource{}, fmt.Errorf("read tree of %s: %w", commit, err)
	}
	return foundSource{key: key, under: under}, nil
}

// sourceOf finds what TreeFS reads of the tree of hash root: its key, and the entry of the
// folder read (nil when there is none, or for the whole tree).
func sourceOf(repo *git.Repository, root plumbing.Hash, o *treeOptions) (sourceKey, *object.TreeEntry, error) {
	key := sourceKey{tree: root, under: o.under, root: o.root, limits: limitsOf(o.policy)}
	ignore, err := find(repo, root, o.ignoreFile())
	if err != nil {
		return key, nil, err
	}
	if ignore != nil && ignore.Mode.IsFile() {
		key.ignore = ignore.Hash
	}
	if o.under == "" {
		return key, nil, nil
	}
	under, err := find(repo, root, o.under)
	if err != nil {
		return key, nil, err
	}
	key.tree = plumbing.ZeroHash
	if under != nil {
		key.tree = under.Hash
	}
	return key, under, nil
}

// readSource reads what TreeFS reads of the source of key.
func readSource(repo *git.Repository, key sourceKey, under *object.TreeEntry, o *treeOptions) (treeFS, error) {
	return readSourceAs(repo, key, under, o, true)
}

// readSourceAs is readSource; byListing selects the files from the listing of the folder read
// when that is the same (selectListed), so that only they enter the FS; otherwise every listed
// file does, and the selection walks its folders.
func readSourceAs(repo *git.Repository, key sourceKey, under *object.TreeEntry, o *treeOptions, byListing bool) (treeFS, error) {
	entries, listed, err := listSource(repo, key, under, o)
	if err != nil {
		return treeFS{}, err
	}
	if byListing {
		if selected, ok, err := selectListed(listed, key, o); ok && err == nil {
			return readSelected(repo, entries, selected, o)
		}
	}
	out := newTreeFS()
	for name, e := range entries {
		out.MapFS[name] = &fstest.MapFile{Mode: 0o644}
		out.large[name] = e.size
	}
	if ignore, ok := entries[o.ignoreFile()]; ok && scheduling.CheckFileSize(ignore.size, o.policy) == nil {
		if err := out.read(repo, o.cache, entries, o.ignoreFile()); err != nil {
			return treeFS{}, err
		}
	}
	selected, err := out.selectWhileMade(o.root, o.relativeUnder(), o.policy)
	var limit *scheduling.SourceLimitError
	switch {
	case errors.As(err, &limit):
		out.refused = err // every file stays listed, unread, with its size
		out.remember(o, nil, err)
		return out, nil
	case err != nil:
		return treeFS{}, err
	}
	keep := map[string]bool{o.ignoreFile(): true}
	for _, f := range selected {
		name := path.Join(o.root, f.Path)
		keep[name] = true
		if scheduling.CheckFileSize(f.Size, o.policy) != nil {
			continue // listed with its real size, unread
		}
		if err := out.read(repo, o.cache, entries, name); err != nil {
			return treeFS{}, err
		}
	}
	for name := range entries {
		if !keep[name] { // ignored by .sourceignore: never read
			delete(out.MapFS, name)
			delete(out.large, name)
		}
	}
	out.remember(o, selected, nil)
	return out, nil
}

// listSource lists the wanted files of a source with their sizes, without reading them: the
// files below the folder read (the tree of key, through the cache) and the .sourceignore that
// applies. It returns the listing of the folder read too (nil when it is not a folder).
func listSource(repo *git.Repository, key sourceKey, under *object.TreeEntry, o *treeOptions) (map[string]entry, *listing, error) {
	entries := map[string]entry{}
	var listed *listing
	switch {
	case o.under == "" || under != nil && under.Mode == filemode.Dir:
		l, err := listHash(repo, o.cache, key.tree, 0)
		if err != nil {
			return nil, nil, err
		}
		l.addTo(entries, dirPrefix(o.under))
		listed = l
	case under == nil:
	case under.Mode.IsFile() && wanted(o.under): // a folder that is a file: that file alone
		size, err := blobSize(repo, o.cache, under.Hash)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", o.under, err)
		}
		entries[o.under] = entry{hash: under.Hash, size: size}
	}
	if !key.ignore.IsZero() {
		if _, ok := entries[o.ignoreFile()]; !ok {
			size, err := blobSize(repo, o.cache, key.ignore)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", o.ignoreFile(), err)
			}
			entries[o.ignoreFile()] = entry{hash: key.ignore, size: size}
		}
	}
	return entries, listed, nil
}

// read reads one listed file into the FS (nothing when it is not listed), through the cache:
// a blob read before is not read again.
func (t treeFS) read(repo *git.Repository, c *Cache, entries map[string]entry, name string) error {
	e, ok := entries[name]
	if !ok {
		return nil
	}
	data, ok := lookup(c, (*Cache).blobsPart, e.hash)
	if !ok {
		var err error
		if data, err = readBlob(repo, e); err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		store(c, (*Cache).blobsPart, e.hash, data, countBlob)
	}
	t.MapFS[name] = &fstest.MapFile{Data: data, Mode: 0o644}
	t.hashes[name] = e.hash
	delete(t.large, name)
	return nil
}

// readBlob reads a blob's content, at most its listed size.
func readBlob(repo *git.Repository, e entry) ([]byte, error) {
	blob, err := repo.BlobObject(e.hash)
	if err != nil {
		return nil, err
	}
	r, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, e.size))
}

// Resolve finds the commit a branch name, tag, remote branch or hash refers to.
func Resolve(repo *git.Repository, rev string) (plumbing.Hash, error) {
	if plumbing.IsHash(rev) {
		h := plumbing.NewHash(rev)
		if _, err := repo.CommitObject(h); err == nil {
			return h, nil
		}
	}
	for _, name := range []plumbing.ReferenceName{
		plumbing.NewBranchReferenceName(rev),
		plumbing.NewRemoteReferenceName("origin", rev),
		plumbing.NewTagReferenceName(rev),
		plumbing.ReferenceName(rev),
	} {
		ref, err := repo.Reference(name, true)
		if err == nil {
			return ref.Hash(), nil
		}
		if !errors.Is(err, plumbing.ErrReferenceNotFound) {
			return plumbing.ZeroHash, fmt.Errorf("resolve %s: %w", rev, err)
		}
	}
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("resolve %q: %w", rev, err)
	}
	return *h, nil
}

// Sub returns the part of fsys below dir ("" or "." for all of it).
func Sub(fsys fs.FS, dir string) (fs.FS, error) {
	dir = strings.Trim(dir, "/")
	if dir == "" || dir == "." {
		return fsys, nil
	}
	return fs.Sub(fsys, dir)
}

// maxHistory bounds how far back Age walks.
const maxHistory = 10000

// Age returns for how many commits of the first-parent chain ending at commit file has existed
// without interruption (0 when it is not at commit): a clock-free measure of how long it has
// been there. It walks at most 10,000 commits.
func Age(repo *git.Repository, commit plumbing.Hash, file string) int {
	age := 0
	for ; age < maxHistory && !commit.IsZero(); age++ {
		c, err := repo.CommitObject(commit)
		if err != nil {
			break
		}
		tree, err := c.Tree()
		if err != nil {
			break
		}
		if _, err := tree.FindEntry(file); err != nil {
			break
		}
		commit = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			commit = c.ParentHashes[0]
		}
	}
	return age
}

// RegistrationAge tells how long a registration has existed in a control plane's history, as
// Inputs read it: minus the number of commits its file has been on main (at in.Main's commit)
// or on the environment branch (at in.Env's commit) without interruption, so that older
// registrations sort first (scheduling.Inputs.Seniority).
func RegistrationAge(repo *git.Repository, in scheduling.Inputs, reg *scheduling.WorkloadRegistration) int64 {
	// Main's files are shown below its prefix; the environment branch's as branch:folder/file.
	for _, src := range []struct{ prefix, commit string }{{in.Main.Prefix, in.Main.Commit}, {in.Env.Name + ":", in.Env.Commit}} {
		if file, ok := strings.CutPrefix(reg.Pos.File, src.prefix); ok && src.commit != "" {
			return -int64(Age(repo, plumbing.NewHash(src.commit), file))
		}
	}
	return 0
}
