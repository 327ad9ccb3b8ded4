package gitcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"

	"github.com/kalypso-gitops/kalypso/internal/remotewait"
)

// push sets a remote branch to commit if it still is at old (zero: the branch must not exist);
// it returns ErrStale when someone else moved the branch first. It sends a pack of the objects
// of commit that neither old nor commit's parents have at the same path (see newObjects), so
// its cost follows the change, not the repository: old and the parents must be commits the
// remote has (branch heads fetched from it). The lease is checked against the branch as the
// remote advertises it, and the remote's update of the branch is itself conditional on old.
func (c *Cache) push(ctx context.Context, owner, name, token, branch string, commit, old plumbing.Hash) error {
	repo, err := c.open(owner, name)
	if err != nil {
		return err
	}
	objects, err := newObjects(repo.Storer, commit, old)
	if err != nil {
		return fmt.Errorf("push %s/%s %s: %w", owner, name, branch, err)
	}
	var pack bytes.Buffer
	if _, err := packfile.NewEncoder(&pack, repo.Storer, false).Encode(objects, 0); err != nil {
		return fmt.Errorf("push %s/%s %s: pack: %w", owner, name, branch, err)
	}
	ref := plumbing.NewBranchReferenceName(branch)
	if err := c.sendPack(ctx, c.URL(owner, name), token, ref, old, commit, &pack); err != nil {
		return fmt.Errorf("push %s/%s %s: %w", owner, name, branch, err)
	}
	c.account(owner+"/"+name, repo)
	return repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewRemoteReferenceName("origin", branch), commit))
}

// sendPack updates ref from old to commit on the remote at url, sending pack.
func (c *Cache) sendPack(ctx context.Context, url, token string, ref plumbing.ReferenceName, old, commit plumbing.Hash, pack io.Reader) error {
	defer remotewait.Since(ctx, time.Now())
	ep, err := transport.NewEndpoint(url)
	if err != nil {
		return err
	}
	t, err := client.NewClient(ep)
	if err != nil {
		return err
	}
	sess, err := t.NewReceivePackSession(ep, auth(token))
	if err != nil {
		return err
	}
	defer sess.Close()
	adv, err := sess.AdvertisedReferencesContext(ctx)
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		adv, err = packp.NewAdvRefs(), nil
	}
	if err != nil {
		return err
	}
	refs, err := adv.AllReferences()
	if err != nil {
		return err
	}
	current := plumbing.ZeroHash
	if r, err := refs.Reference(ref); err == nil {
		current = r.Hash()
	}
	switch {
	case current == commit:
		return nil
	case current != old:
		return fmt.Errorf("%w: at %s, not %s", ErrStale, current, old)
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(adv.Capabilities)
	req.Commands = []*packp.Command{{Name: ref, Old: old, New: commit}}
	req.Packfile = io.NopCloser(pack)
	status, err := sess.ReceivePack(ctx, req)
	if err != nil {
		if rejected(err) {
			return fmt.Errorf("%w: %v", ErrStale, err)
		}
		return err
	}
	if status != nil {
		if err := status.Error(); err != nil {
			return fmt.Errorf("%w: %v", ErrStale, err)
		}
	}
	return nil
}

// newObjects lists commit and the objects of its tree that none of the trees of have and of
// commit's parents holds at the same path: a folder whose hash one of them has at its path is
// not looked into. Every object listed must be in s.
func newObjects(s storer.EncodedObjectStorer, commit plumbing.Hash, have ...plumbing.Hash) ([]plumbing.Hash, error) {
	c, err := object.GetCommit(s, commit)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", commit, err)
	}
	var trees []plumbing.Hash
	for _, h := range append(have, c.ParentHashes...) {
		if h.IsZero() {
			continue
		}
		hc, err := object.GetCommit(s, h)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", h, err)
		}
		trees = append(trees, hc.TreeHash)
	}
	w := &objectWalk{s: s, seen: map[plumbing.Hash]bool{commit: true}, out: []plumbing.Hash{commit}}
	if err := w.tree(c.TreeHash, trees); err != nil {
		return nil, err
	}
	return w.out, nil
}

// objectWalk lists the objects of a tree that other trees lack.
type objectWalk struct {
	s    storer.EncodedObjectStorer
	seen map[plumbing.Hash]bool
	out  []plumbing.Hash
}

// tree lists the tree h and what it holds that the trees of others (at the same path) lack.
func (w *objectWalk) tree(h plumbing.Hash, others []plumbing.Hash) error {
	for _, o := range others {
		if o == h {
			return nil
		}
	}
	if w.seen[h] {
		return nil
	}
	w.seen[h] = true
	w.out = append(w.out, h)
	t, err := object.GetTree(w.s, h)
	if err != nil {
		return fmt.Errorf("read tree %s: %w", h, err)
	}
	theirs := make([]map[string]object.TreeEntry, 0, len(others))
	for _, o := range others {
		ot, err := object.GetTree(w.s, o)
		if err != nil {
			return fmt.Errorf("read tree %s: %w", o, err)
		}
		m := make(map[string]object.TreeEntry, len(ot.Entries))
		for _, e := range ot.Entries {
			m[e.Name] = e
		}
		theirs = append(theirs, m)
	}
	for _, e := range t.Entries {
		var below []plumbing.Hash
		found := false
		for _, m := range theirs {
			o, ok := m[e.Name]
			switch {
			case !ok:
			case o.Hash == e.Hash:
				found = true
			case o.Mode == filemode.Dir:
				below = append(below, o.Hash)
			}
		}
		switch {
		case found || e.Mode == filemode.Submodule:
		case e.Mode == filemode.Dir:
			if err := w.tree(e.Hash, below); err != nil {
				return err
			}
		case !w.seen[e.Hash]:
			if err := w.s.HasEncodedObject(e.Hash); err != nil {
				return fmt.Errorf("object %s of %s: %w", e.Hash, e.Name, err)
			}
			w.seen[e.Hash] = true
			w.out = append(w.out, e.Hash)
		}
	}
	return nil
}
